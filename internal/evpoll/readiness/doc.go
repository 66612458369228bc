// Package readiness is the readiness-based emulation of the evpoll
// completion contract that the epoll backend (package uring) and the
// kqueue backend (package kqueue) share. A [Core] holds the backend state
// and logic once: the slot table behind OpIDs, the per-descriptor FIFOs
// of waiting ops, Submit's validation, Cancel, the Wait loop and the
// delivery of completions, the coalesced Wake, Close, and the blocking
// pool for descriptors that cannot be polled. What differs between the
// kernels (registration, the non-blocking system calls, the wake event and
// the blocking poll) is the small [OS] interface that each backend
// implements. The backends embed the Core, so its methods are theirs
// (Submit, Cancel, Wait, Wake, Pending, Stats, Forget); the loop it
// shares with IOCP is in package evpoll/slots.
//
// Each descriptor an op names is registered once, edge-triggered for read
// and write readiness, so there is no registration call per op. Submit
// first tries the non-blocking system call; on EAGAIN the op joins the
// descriptor's read or write FIFO, and a later edge runs that FIFO in
// order until an op would block again. A descriptor the OS half reports as
// a file (a regular file, or one the kernel refuses to poll) has its Read,
// Write and Close, like every Open, run on a small bounded pool that
// records the completion under the core's mutex and kicks a blocked Wait.
// A pool op cancelled while it is queued completes at once and never
// runs; one whose system call has started completes with its result.
//
// Polled descriptors are non-blocking, or a Try would block its caller:
// sockets are made so, and Open passes O_NONBLOCK (unixsock.OpenFlags),
// which also keeps an open of a FIFO from waiting for the other end. The
// OS half takes the flag off a descriptor it reports as a file, whose
// calls are meant to block on the pool.
//
// The package builds on linux, darwin and freebsd; elsewhere it is empty.
package readiness
