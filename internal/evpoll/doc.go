// Package evpoll is the completion contract between the Jade scheduler and
// its I/O backends (io_uring and epoll in package uring, kqueue in package
// kqueue, IOCP in package iocp): the types and the [Backend] interface, not
// a poller itself. It imports nothing of ours and builds on every OS; its
// subpackages (slots, workpool, readiness, unixsock, evpolltest) are what
// the backends share.
//
// # The contract
//
// A backend turns I/O requests into completions that carry a [Token]. The
// token is the scheduler's wake token id: the backend never interprets it,
// and the scheduler never learns what an event means beyond "this token's
// op finished with this result" (DESIGN §3.2: wait/wake by token). The
// life of one operation is:
//
//  1. Submit(op, tok) returns an [OpID] and takes ownership of op.
//  2. The op runs. A backend may start it inside Submit (epoll tries the
//     non-blocking syscall at once) or batch it until the next Wait
//     (io_uring writes an SQE and enters the kernel on the next Wait, Wait(0)
//     included, or at once when another goroutine is blocked in Wait).
//  3. Exactly one [Completion] with that token is returned by Wait: the
//     op's final completion. Only then does ownership return to the caller.
//
// Cancel(id) asks for an early end. It never produces a completion by
// itself: the op's own final completion still arrives exactly once, either
// with Res = -ECANCELED and [FlagCancelled] set, or with the op's real
// result when the op had already finished (or cannot be interrupted, like a
// regular-file read running on a blocking pool). A scheduler that cancels
// a waiting task therefore marks the task Cancelled, calls Cancel, and
// treats the late completion as a stale wake (its token generation is
// gone). Cancel of an op that has already finished yields [ErrNotPending]
// (possibly before Wait has returned its completion) and is harmless; a
// repeated Cancel of a pending op returns nil.
//
// # Ownership
//
// Everything reachable from a submitted [Op] belongs to the backend until
// the op's final completion has been returned by Wait: the Op itself, its
// Buf, its Path. The caller must not modify, reuse or drop them earlier
// (a kernel may be writing into Buf). Backends keep a Go reference to the
// Op in a slot table indexed by the OpID's slot, so the garbage collector
// cannot free memory the kernel still uses; they never pass a Go pointer
// through the kernel's user_data (an OpID is slot | generation<<32, and a
// completion whose generation no longer matches its slot is dropped).
// Storage the kernel writes besides Buf (sockaddrs, socklen words,
// timespecs, NUL-terminated paths) lives inside the backend's slot, also
// until the final completion, including for cancelled ops.
//
// # Concurrency
//
// Every method is safe for concurrent use, with one restriction a backend
// may add: an owner-thread mode (io_uring with SINGLE_ISSUER, see package
// uring) in which Wait and Close must come from the OS thread that opened
// the backend (locked with runtime.LockOSThread). Wake, Cancel, Stats,
// Pending and Name work from any goroutine in every mode; that is what a
// scheduler needs to wake or cancel on behalf of another worker.
//
// Wait may return fewer completions than are ready (len(out) bounds it)
// and may return (0, nil) early after a Wake; callers loop.
//
// # Results
//
// Completion.Res is what the system call would have returned: a byte
// count, a new file descriptor (Accept, Open), 0, or a negated errno.
// [Completion.Err] converts a negative Res to a [syscall.Errno].
//
// # Shared backend code
//
// Code the backends would otherwise write twice lives here and in
// subpackages: [CheckOp] (Submit's validation), slots (the
// generation-checked slot table behind OpIDs), workpool (the bounded pool
// for blocking system calls), readiness (the readiness core of the epoll
// and kqueue backends, which supply only their OS half), unixsock (open
// flags and sockaddr conversions on Unix) and evpolltest (the conformance
// suite every backend's tests run).
package evpoll
