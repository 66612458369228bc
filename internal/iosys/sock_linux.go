//go:build linux

package iosys

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// AcceptNow accepts a connection waiting on the non-blocking listening
// socket fd, as a non-blocking, close-on-exec socket, without waiting:
// unix.EAGAIN when none is waiting. A server's accept loop takes a
// backlog this way in one slice instead of one connection per run-queue
// round (the RuntimeBus's net.accept tries it before it submits).
//
// AcceptNow and SendNow cannot block, so they enter the kernel through
// RawSyscall6: entersyscall would let sysmon hand the calling worker's P
// to another goroutine, and the worker would then wait in Go's run queue
// for a P to run its tasks on, up to a Go time slice (measured by the
// http scenario of `jade perf`; figures in docs/PERFORMANCE.md).
func AcceptNow(fd int) (int, error) {
	r, _, errno := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, fmt.Errorf("iosys: accept: %w", errno)
	}
	return int(r), nil
}

// SendNow sends what of buf the connected socket fd takes without waiting
// (MSG_DONTWAIT; MSG_NOSIGNAL: a closed peer is EPIPE, never SIGPIPE) and
// returns how much that was: unix.EAGAIN when it takes nothing.
func SendNow(fd int, buf []byte) (int, error) {
	p := bufPtr(buf)
	r, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(p), uintptr(len(buf)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, fmt.Errorf("iosys: send: %w", errno)
	}
	return int(r), nil
}

// recvDontWait is recvfrom(2) with MSG_DONTWAIT and no source address:
// unix.Recvfrom allocates the address it returns, a garbage object per
// read of a server's connection (the http scenario of `jade perf`). It
// cannot block, so it enters the kernel as AcceptNow does.
func recvDontWait(fd int, buf []byte) (int, error) {
	p := bufPtr(buf)
	r, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(p), uintptr(len(buf)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// bufPtr is buf's first byte for a raw socket call, nil for an empty buf.
func bufPtr(buf []byte) unsafe.Pointer {
	if len(buf) == 0 {
		return nil
	}
	return unsafe.Pointer(&buf[0])
}
