//go:build linux

package uring

// Epoll: the readiness-based emulation of the completion contract, the
// Linux OS half of the shared readiness core (package evpoll/readiness).
//
// Each descriptor an op names is registered once, edge-triggered, for
// EPOLLIN|EPOLLOUT|EPOLLRDHUP (no epoll_ctl per op). Submit first tries the
// non-blocking syscall; on EAGAIN the op joins the descriptor's read or
// write FIFO, and an edge later runs the FIFO until EAGAIN again. Pipes,
// FIFOs and pollable character devices (a terminal) are polled like
// sockets, on a non-blocking descriptor. A descriptor epoll refuses
// (EPERM: a regular file, a directory, a block device) is marked as a
// file and its Read/Write/Close, like every Open, run on a small blocking
// pool that posts the completion and kicks the poller through the
// eventfd.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/readiness"
	"golang.org/x/sys/unix"
)

// Epoll is an evpoll.Backend on epoll. All methods are safe for concurrent
// use; several goroutines may even block in Wait at once.
// Its errors name it ("epoll: submit: ..."), not the package, so a log
// says which backend failed.
type Epoll struct {
	*readiness.Core // Submit, Cancel, Wait, Wake, Pending, Stats, Forget
	os              *epollOS
	reason          string
}

// epollOS is the epoll half of the readiness core: registration, the
// non-blocking syscalls, the eventfd and epoll_pwait2.
type epollOS struct {
	epfd, efd int
	pwait2    bool // epoll_pwait2 (5.11) works; else epoll_wait with ms
	ctr       *evpoll.Counters
}

var (
	_ evpoll.Backend = (*Epoll)(nil)
	_ readiness.OS   = (*epollOS)(nil)
)

// OpenEpoll creates an epoll backend. reason is recorded for Reason (for
// example why io_uring was not used).
func OpenEpoll(o Options, reason string) (*Epoll, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: open: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: open: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: open: epoll_ctl eventfd: %w", err)
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	os := &epollOS{epfd: epfd, efd: efd}
	// Probe epoll_pwait2 with a zero timeout; ENOSYS (before 5.11) means
	// epoll_wait with the timeout rounded up to whole milliseconds.
	var evs [1]unix.EpollEvent
	_, err = os.pwait2Call(evs[:], 0)
	os.pwait2 = !errors.Is(err, unix.ENOSYS)
	core := readiness.New(readiness.Config{Name: "epoll", PollOp: "wait", MaxInFlight: n, PoolSize: o.PoolSize}, os)
	os.ctr = core.Counters()
	wait := "epoll_pwait2"
	if !os.pwait2 {
		wait = "epoll_wait(ms)"
	}
	if reason != "" {
		reason = ": " + reason
	}
	return &Epoll{Core: core, os: os, reason: fmt.Sprintf("epoll %s pool=%d%s", wait, core.PoolSize(), reason)}, nil
}

// Name implements evpoll.Backend.
func (b *Epoll) Name() string { return "epoll" }

// Reason says how the backend waits and why epoll was chosen.
func (b *Epoll) Reason() string { return b.reason }

// Close implements evpoll.Backend. Pool jobs already running finish first
// (they are blocking syscalls); queued socket ops are dropped.
// Descriptors accepted or opened for completions that were never returned
// are closed; the descriptors the ops named belong to the caller.
func (b *Epoll) Close() error {
	if !b.Core.Close() {
		return nil
	}
	err := unix.Close(b.os.efd)
	if e := unix.Close(b.os.epfd); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("epoll: close: %w", err)
	}
	return nil
}

// Register implements readiness.OS: EPOLL_CTL_ADD, edge-triggered; EPERM
// (regular files, directories, block devices and the character devices
// without poll cannot be polled) makes it a file.
//
// A polled descriptor must be non-blocking, or Try's read(2) or write(2)
// would block the worker (a FIFO whose writer never writes stalled every
// task of its worker): sockets are made so (accept4 SOCK_NONBLOCK,
// Socket, Listen) and files are opened so (unixsock.OpenFlags), so that
// registering costs no fcntl. A file goes to the pool, whose calls are
// meant to block: its O_NONBLOCK is taken off.
func (o *epollOS) Register(fd int) (file bool, err error) {
	o.ctr.Syscalls.Add(1)
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(o.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		if !errors.Is(err, unix.EPERM) {
			return false, err
		}
		o.ctr.Syscalls.Add(2)
		_ = unix.SetNonblock(fd, false)
		return true, nil
	}
	return false, nil
}

// Unregister implements readiness.OS with EPOLL_CTL_DEL.
func (o *epollOS) Unregister(fd int) {
	o.ctr.Syscalls.Add(1)
	_ = unix.EpollCtl(o.epfd, unix.EPOLL_CTL_DEL, fd, nil)
}

// Try implements readiness.OS: the op once, non-blocking; done is false
// on EAGAIN.
func (o *epollOS) Try(s *readiness.Slot) (res int32, done bool) {
	op := s.Op
	for {
		o.ctr.Syscalls.Add(1)
		var r uintptr
		var errno unix.Errno
		p, n := bufAddr(op.Buf)
		switch op.Kind {
		case evpoll.Accept:
			var sa unix.RawSockaddrAny
			salen := uint32(unix.SizeofSockaddrAny)
			r, _, errno = unix.Syscall6(unix.SYS_ACCEPT4, uintptr(s.Fd), uintptr(unsafe.Pointer(&sa)),
				uintptr(unsafe.Pointer(&salen)), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
			if errno == 0 {
				op.Addr = getSockaddr(&sa)
			}
		case evpoll.Recv:
			r, _, errno = unix.Syscall6(unix.SYS_RECVFROM, uintptr(s.Fd), uintptr(p), uintptr(n), 0, 0, 0)
		case evpoll.Send:
			r, _, errno = unix.Syscall6(unix.SYS_SENDTO, uintptr(s.Fd), uintptr(p), uintptr(n), unix.MSG_NOSIGNAL, 0, 0)
		case evpoll.Read:
			r, _, errno = unix.Syscall(unix.SYS_READ, uintptr(s.Fd), uintptr(p), uintptr(n))
		case evpoll.Write:
			r, _, errno = unix.Syscall(unix.SYS_WRITE, uintptr(s.Fd), uintptr(p), uintptr(n))
		case evpoll.Connect:
			return o.connectCheck(s)
		}
		switch errno {
		case 0:
			return int32(r), true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, false
		}
		return -int32(errno), true
	}
}

// ConnectStart implements readiness.OS: connect(2) on the non-blocking
// socket. The kernel copies the sockaddr, so it may live on the stack.
func (o *epollOS) ConnectStart(s *readiness.Slot) (int32, bool) {
	o.ctr.Syscalls.Add(1)
	var sa unix.RawSockaddrAny
	salen, err := putSockaddr(&sa, s.Op.Addr)
	if err != nil {
		return -int32(unix.EINVAL), true
	}
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(s.Fd), uintptr(unsafe.Pointer(&sa)), uintptr(salen))
	switch errno {
	case 0:
		return 0, true
	case unix.EINPROGRESS, unix.EINTR, unix.EALREADY:
		return 0, false
	}
	return -int32(errno), true
}

// connectCheck runs when the connecting socket became writable: SO_ERROR
// holds the outcome; a still-unconnected socket keeps waiting.
func (o *epollOS) connectCheck(s *readiness.Slot) (int32, bool) {
	if res, done := readiness.SoError(s.Fd); !done || res < 0 {
		return res, done
	}
	var sa unix.RawSockaddrAny
	l := uint32(unix.SizeofSockaddrAny)
	_, _, errno := unix.Syscall(unix.SYS_GETPEERNAME, uintptr(s.Fd), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&l)))
	if errno == unix.ENOTCONN {
		return 0, false
	}
	return 0, true
}

// Kick implements readiness.OS with an eventfd write.
func (o *epollOS) Kick() {
	one := eventfdOne
	unix.Syscall(unix.SYS_WRITE, uintptr(o.efd), uintptr(unsafe.Pointer(&one[0])), 8)
}

// eventfdOne is the u64 1 in host byte order, the value an eventfd write adds.
var eventfdOne = func() (b [8]byte) {
	binary.NativeEndian.PutUint64(b[:], 1)
	return b
}()

// Drain implements readiness.OS: it reads the eventfd back to zero.
func (o *epollOS) Drain() {
	var buf [8]byte
	unix.Syscall(unix.SYS_READ, uintptr(o.efd), uintptr(unsafe.Pointer(&buf[0])), 8)
}

// Poll implements readiness.OS with epoll_pwait2 (or epoll_wait) and turns
// the epoll events into readiness events. On an error it returns 0 events:
// x/sys's EpollWait returns -1 with EINTR (a signal to the parked thread,
// Go's preemption signal among them), and the core slices by the count
// (TestEpollWaitInterrupted).
func (o *epollOS) Poll(evs []readiness.Event, rem time.Duration) (int, error) {
	var raw [128]unix.EpollEvent
	n, err := o.pwait(raw[:min(len(evs), len(raw))], rem)
	if err != nil {
		return 0, err
	}
	const rd = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	const wr = unix.EPOLLOUT | unix.EPOLLHUP | unix.EPOLLERR
	for i, ev := range raw[:n] {
		var fl uint8
		switch {
		case int(ev.Fd) == o.efd:
			fl = readiness.EvWake
		default:
			if ev.Events&rd != 0 {
				fl |= readiness.EvRead
			}
			if ev.Events&wr != 0 {
				fl |= readiness.EvWrite
			}
		}
		evs[i] = readiness.Event{Fd: ev.Fd, Flags: fl}
	}
	return n, nil
}

// pwait waits for events; rem < 0 blocks without limit.
func (o *epollOS) pwait(evs []unix.EpollEvent, rem time.Duration) (int, error) {
	o.ctr.Syscalls.Add(1)
	if o.pwait2 {
		return o.pwait2Call(evs, rem)
	}
	ms := -1
	if rem >= 0 {
		ms = int((rem + time.Millisecond - 1) / time.Millisecond) // round up: never early
	}
	return unix.EpollWait(o.epfd, evs, ms)
}

// pwait2Call is epoll_pwait2(2): the timeout is a timespec. Syscall6 (not
// RawSyscall) lets the runtime treat the blocked thread as in a syscall.
func (o *epollOS) pwait2Call(evs []unix.EpollEvent, rem time.Duration) (int, error) {
	var r uintptr
	var errno unix.Errno
	if rem < 0 {
		r, _, errno = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(o.epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	} else {
		ts := durationTimespec(rem)
		r, _, errno = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(o.epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
