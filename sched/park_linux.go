//go:build linux

package sched

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// parker blocks one worker thread until another thread unparks it. On
// Linux it is a futex on a private word: no channel, no timer, no periodic
// wake-up (S-4). A worker is locked to its OS thread, so blocking the thread
// in the kernel is what we want; the call goes through unix.Syscall6 (not
// RawSyscall) so the Go runtime sees the thread enter a syscall, hands its P
// on and never waits for it in a GC stop-the-world.
//
// state: 0 empty, 1 notified (an unpark token is kept), 2 a thread sleeps
// (or is about to) in FUTEX_WAIT. A token sent before park is kept, so an
// unpark is never lost; a token is consumed by exactly one park.
type parker struct {
	state atomic.Uint32
	_     [cacheLinePad - 4]byte
}

const (
	parkEmpty    = 0
	parkNotified = 1
	parkSleeping = 2

	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// park blocks until a token is available and consumes it, or until
// timeout nanoseconds have passed (timeout < 0: no limit). The timeout is a
// relative timespec given to FUTEX_WAIT: nanosecond precision, no timer
// object, and nothing wakes the thread before it (S-4).
func (p *parker) park(timeout int64) {
	var deadline int64
	if timeout >= 0 {
		deadline = nanotime() + timeout
	}
	for {
		switch p.state.Load() {
		case parkNotified:
			if p.state.CompareAndSwap(parkNotified, parkEmpty) {
				return
			}
		case parkEmpty:
			p.state.CompareAndSwap(parkEmpty, parkSleeping)
		case parkSleeping:
			// Returns at once if the word is no longer parkSleeping; EINTR
			// and spurious returns just loop.
			if timeout < 0 {
				unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.state)), futexWaitPrivate, parkSleeping, 0, 0, 0)
				continue
			}
			left := deadline - nanotime()
			if left <= 0 {
				// Timed out: leave the sleeping state unless a token
				// arrived meanwhile (then the next turn consumes it).
				if p.state.CompareAndSwap(parkSleeping, parkEmpty) {
					return
				}
				continue
			}
			ts := unix.NsecToTimespec(left)
			unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.state)), futexWaitPrivate, parkSleeping, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
	}
}

// unpark leaves a token and wakes the thread if it sleeps.
func (p *parker) unpark() {
	if p.state.Swap(parkNotified) == parkSleeping {
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&p.state)), futexWakePrivate, 1, 0, 0, 0)
	}
}
