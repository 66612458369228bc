// Package kqueue is the completion backend of the Jade scheduler for
// macOS and FreeBSD: a readiness-based emulation of the
// [github.com/jadevm/jade/internal/evpoll.Backend] contract on kqueue(2): the BSD OS
// half of the readiness core (package evpoll/readiness) that it shares
// with the Linux epoll backend in package uring. It imports only evpoll
// and its subpackages, golang.org/x/sys/unix and the standard library, and
// never calls Go's net or os I/O.
//
// This package is compiled and vetted, tests included, for darwin and
// freebsd (amd64 and arm64, CGO_ENABLED=0) by this project's CI, but it is
// not executed by that CI, which runs on Linux only. Its tests are meant
// to be run by hand on a Mac or a FreeBSD machine. On every other system
// only [Open] exists, and it returns an error wrapping [evpoll.ErrNotSupportedOnOS].
//
// # Readiness
//
// Each descriptor an op names is registered once, at its first op, for
// EVFILT_READ and EVFILT_WRITE with EV_CLEAR (edge-triggered, so there is
// no kevent change per op) and put in non-blocking mode. Submit first
// tries the non-blocking system call; on EAGAIN the op joins the
// descriptor's read or write FIFO, and a later event runs that FIFO until
// EAGAIN again. Connect issues connect(2) and completes when the socket
// turns writable and SO_ERROR holds the outcome. Accept returns a
// non-blocking, close-on-exec socket (accept4 on FreeBSD; accept plus
// fcntl under syscall.ForkLock on macOS) and sets Op.Addr. Send never
// raises SIGPIPE: MSG_NOSIGNAL on FreeBSD, SO_NOSIGPIPE on macOS sockets.
//
// # Regular files
//
// kqueue reports regular files as always readable (and writable), so
// polling them would block the caller in the actual read. A descriptor
// that fstat(2) calls a regular file or directory, or that kqueue refuses
// to register, is marked as a file: its Read, Write and Close, like every
// Open, run on a small bounded blocking pool (Options.PoolSize goroutines,
// default 4) that records the completion under the backend mutex and
// triggers the wake event, so no caller of Submit or Wait ever blocks on
// disk. A pool op cancelled while it is queued completes at once with
// -ECANCELED and never runs; one whose system call has started cannot be
// interrupted and completes with its real result, as the evpoll contract
// allows. Pipes, FIFOs and terminals are polled like sockets, on a
// non-blocking descriptor. Open passes O_NONBLOCK, so it never waits for
// the other end of a FIFO (a write-only open with no reader fails with
// ENXIO); Register puts a file back in blocking mode for the pool.
//
// # Wake, wait and timeouts
//
// Wake triggers an EVFILT_USER event (ident 0, EV_CLEAR) with NOTE_TRIGGER;
// wakes are coalesced until a Wait observes one. The same user event kicks
// a blocked Wait when another goroutine completes an op (a pool job, a
// Cancel, a Close op). Wait passes its timeout to kevent(2) as a timespec,
// so timeouts have nanosecond resolution, as the contract requires; a
// timeout that ends with nothing ready returns (0, nil).
//
// # Slots
//
// An OpID is slot | generation<<32, as in the Linux backends: the slot
// table grows in chunks as ops are submitted, up to Options.MaxInFlight,
// and never moves a slot once allocated; a slot holds the *Op (and through
// it Buf and the connect address) until the op's completion has been
// returned by Wait, and a generation mismatch marks an OpID or pool result
// as stale (Stats.Stale). Cancel completes an op waiting for readiness at
// once with Res = -ECANCELED and evpoll.FlagCancelled; a Close op does the
// same for every op still queued on the descriptor it closes, then forgets
// the descriptor (closing it removes its kevents).
//
// Stats.Syscalls counts kevent and I/O system calls, Stats.Pool the ops
// run on the pool; Kernel and Overflows stay zero (they are io_uring's).
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package kqueue
