// Package uring holds the Linux completion backends of the Jade scheduler:
// [Ring], io_uring driven through its rings by this package on
// golang.org/x/sys/unix alone, and [Epoll], a readiness-based emulation of
// the same [github.com/jadevm/jade/internal/evpoll.Backend] contract. [Open] picks one. The package never
// calls Go's net or os I/O (os only reads JADE_POLLER; a test enforces
// it). The package makes no socket: package iosys makes them (see its doc
// for who owns a descriptor), and the backends only submit ops on them and
// complete them. On other systems only [Open] exists, and it returns an
// error wrapping [evpoll.ErrNotSupportedOnOS].
//
// # Selection
//
// Open honours Options.Poller, else JADE_POLLER, else "auto": io_uring,
// falling back to epoll when io_uring_setup fails with ENOSYS (no
// io_uring), EPERM (kernel.io_uring_disabled, seccomp) or EINVAL (no usable
// flag set), or the kernel lacks EXT_ARG/NODROP (5.11) or an opcode we use
// (REGISTER_PROBE). The epoll backend's Reason records why. ENOMEM, EMFILE
// and the like are errors, not fallbacks.
//
// # Ring layout
//
// io_uring_setup is tried with a ladder of flag sets, best first; only
// EINVAL moves down a rung (an unknown flag). Owner-thread rings try
// SINGLE_ISSUER|DEFER_TASKRUN|COOP_TASKRUN|TASKRUN_FLAG|SUBMIT_ALL, then
// without DEFER_TASKRUN, then without SINGLE_ISSUER, then SUBMIT_ALL, then
// nothing; shared rings try SUBMIT_ALL, then nothing. CQSIZE|CLAMP are on
// every rung (CQ = 2×SQ unless Options.CQEntries). Shared rings never use
// COOP_TASKRUN: completions run as task work on the submitting thread, and
// without the IPI a Go thread parked in a futex would sit on another
// thread's completions. Reason shows what took.
//
// Three mappings, every offset from io_uring_params: the SQ ring
// (sq_off.array + 4·sq_entries bytes), the CQ ring (cq_off.cqes +
// 16·cq_entries; the same mapping as the SQ ring under FEAT_SINGLE_MMAP)
// and the SQE array (64·sq_entries), via unix.MmapPtr with MAP_POPULATE.
// SQEs are filled in ring order, so the SQ index array is the identity,
// written once. Struct layouts are pinned by tests (params 120 B, SQE 64 B,
// CQE 16 B, offsets 40 B, getevents_arg 24 B).
//
// # Memory ordering
//
// sync/atomic is sequentially consistent, so it gives the acquire/release
// the ring protocol needs (loadAcquire/storeRelease name the intent):
// the SQ tail is store-released after an SQE is filled; the kernel-owned
// SQ head is loaded before an SQE slot is reused; the CQ tail is
// load-acquired before CQEs are read; the CQ head is store-released after
// they were copied out; the SQ flags word (CQ_OVERFLOW, TASKRUN) is loaded
// atomically. Only the holder of Ring.mu touches our copies of the
// indices.
//
// # Tokens, slots and lifetimes
//
// An op's user_data is its OpID: slot | generation<<32 (generation in bits
// 32..62, never 0; bit 63 marks our own SQEs: wake, kick, cancel). The slot
// table grows in chunks as ops are submitted, up to Options.MaxInFlight,
// and never moves a slot once allocated. A slot holds the *Op (and so its
// Buf), the token, and what the kernel reads or writes by pointer besides
// Buf: the sockaddr and socklen of Accept/Connect and the NUL-terminated
// path of Open. The slot is released only when the op's own
// CQE is reaped, also for cancelled ops, so the kernel never writes into
// memory the GC could have freed (TestBackendKeepsOpAlive checks it with
// weak pointers). A CQE whose generation does not match its slot is stale
// and dropped (Stats.Stale). Close cancels everything and reaps until the
// kernel has returned every op; what it cannot get back within two seconds
// stays referenced for the life of the process.
//
// # Ops
//
//	evpoll     opcode       fd         addr         len     off            op flags
//	Accept     ACCEPT       listener   &sockaddr    -       &socklen       SOCK_CLOEXEC|SOCK_NONBLOCK
//	Connect    CONNECT      socket     &sockaddr    -       socklen        -
//	Recv       RECV         socket     buf          len     -              0
//	Send       SEND         socket     buf          len     -              MSG_NOSIGNAL
//	Read       READ         fd         buf          len     offset (-1)    0
//	Write      WRITE        fd         buf          len     offset (-1)    0
//	Open       OPENAT       AT_FDCWD   &path        mode    -              O_* | O_CLOEXEC | O_NONBLOCK
//	Close      CLOSE        fd         -            -       -              -
//	Nop        NOP          -1
//	(Cancel)   ASYNC_CANCEL -1         user_data    -       -              0 (match user_data)
//
// io_uring ignores O_NONBLOCK for these socket ops (it arms its internal
// poll), so the non-blocking sockets that epoll needs serve both backends.
//
// OPENAT runs with O_NONBLOCK so that it never waits for the other end
// of a FIFO, on either backend (unixsock.OpenFlags): the kernel's inline
// attempt opens that way anyway and then clears the flag, but an open it
// hands to an io-wq worker (a path the lookup cannot resolve from the
// cache, such as /proc/self/fd/N) would otherwise block there. The
// completion takes the flag off again (one fcntl): the ring's reads want a
// blocking descriptor, since on a file without non-blocking reads
// O_NONBLOCK turns the retry on io-wq into -EAGAIN. A cancel that
// interrupts an io-wq worker's wait ends the op with a kernel restart code
// (-ERESTARTSYS); the completion reports -ECANCELED instead.
//
// Cancel writes an ASYNC_CANCEL for the op's user_data. The op's own CQE
// then arrives with -ECANCELED (Completion.FlagCancelled) or, if it had
// already finished, with its result: exactly one completion either way.
//
// # Descriptor lifetime
//
// A descriptor number must not be freed while any queued or in-flight op
// names it. An SQE names its descriptor by number until the kernel
// consumes it at the next io_uring_enter, and epoll retries an op's
// syscall by number at every edge; a number closed under them and reused
// (an accept or open returns the lowest free number) would let the op
// read, write or accept on another file: one connection's data delivered
// to another. Once an SQE is consumed the kernel holds its own reference
// to the file, but the user cannot tell which SQEs were consumed, so the
// rule covers every op from Submit to its final completion. The rule is
// the caller's, as for Go's internal/poll (fdMutex): the Jade scheduler
// holds a reference per op on a sched.FD and closes the number (with a
// Close op, or close(2) after every backend forgot it) only when the last
// op's completion has been returned by Wait, cancelling the ops first
// when a close is asked for while they are in flight. The same rule holds
// for the kqueue and IOCP backends: kqueue's filters and IOCP's
// association are per descriptor and handle, and a handle value is reused
// by Windows just like a descriptor number.
//
// # Waiting, timeouts, overflow
//
// Submit only writes the SQE. Wait submits what is queued and waits in the
// same io_uring_enter(GETEVENTS|EXT_ARG) call with a __kernel_timespec, so
// timeouts have nanosecond resolution (TestWaitTimeout; figures in
// docs/PERFORMANCE.md); ETIME, EINTR, EAGAIN and EBUSY just loop. Wait(0) makes no
// syscall unless SQEs are queued or the kernel flags task work
// (TASKRUN_FLAG; needed under DEFER_TASKRUN, where completions are posted
// only when the owner enters) or a CQ overflow. Blocking calls use
// unix.Syscall6, never RawSyscall, so a GC stop never waits on a parked
// worker. FEAT_NODROP is required: when the CQ is full the kernel keeps
// CQEs on its overflow list and sets IORING_SQ_CQ_OVERFLOW; after reaping
// the CQ, Wait flushes the list with a GETEVENTS enter and reaps again
// (TestCQOverflow pushes 160 NOPs through an 8-entry CQ; Stats.Overflows
// counts the flushes). On old kernels that refuse submission with EBUSY
// while CQEs are pending, Submit moves the CQ into a Go-side list first.
//
// # Wake
//
// An eventfd registered with REGISTER_EVENTFD only signals from the
// kernel; it does not wake a thread inside io_uring_enter. Two mechanisms
// do, both implemented (Options.Wake) and measured by BenchmarkWake:
//   - msgring (default): a private two-entry ring sends IORING_OP_MSG_RING
//     to the backend's ring, posting a CQE tagged udWake (CQE_SKIP_SUCCESS
//     keeps the waker's own CQ empty). Any goroutine may use it, even for
//     an owner-thread ring, because it is the waker ring that is entered.
//   - eventfd: an 8-byte READ on an eventfd stays armed in the ring; Wake
//     writes the eventfd; Wait re-arms the read after each wake.
//
// Wakes coalesce (an atomic flag) until a Wait observes one, so a burst of
// Wakes costs one syscall. BenchmarkWake measures Wake→Wait-return: msgring
// is the fastest at the median, and the waiter makes one syscall per wake
// with it against two with eventfd (the re-arm); the tails are alike for
// every mechanism (the VM's vCPU wake-up). Hence msgring.
//
// # Topology decision: one ring per worker
//
// The scheduler should open one Ring per worker with Options.OwnerThread,
// on the worker's locked OS thread, and let every idle worker wait in its
// own ring. BenchmarkTopology (two workers, each submitting and reaping
// NOPs, which complete inside io_uring_enter, so the figure is pure ring
// overhead) finds a ring per worker about twice as fast per op as one
// shared ring, and steadier. On a shared
// ring the mutex, the cache lines of the ring indices and the kernel's
// uring_lock bounce between the CPUs, and that grows with the number of
// workers. Per-worker rings also allow SINGLE_ISSUER|
// DEFER_TASKRUN: no IPIs, completions batched at the owner's enter.
// Single-connection echo costs the same on both (BenchmarkEchoRoundTrip),
// so nothing argues for sharing.
//
// What a worker ring needs from other threads works from any goroutine:
//   - Wake sends MSG_RING from the waker ring;
//   - Cancel writes its ASYNC_CANCEL SQE under the mutex (writing SQ
//     memory is allowed from any thread; only io_uring_enter is reserved
//     to the SINGLE_ISSUER owner) and, if the owner is blocked, kicks it
//     with a MSG_RING CQE tagged udKick so it re-enters and submits (a full
//     SQ queues the request for the owner's next Wait instead);
//   - Submit does the same, but fails with a full SQ, where only the owner
//     may flush.
//
// Costs of the choice: each worker pins an OS thread for its ring's life
// (Go terminates a locked thread whose goroutine exits while locked, and a
// thread that exits with reads in flight makes them fail with -EFAULT, so
// the owner must Close before unlocking); an op stays on the worker that
// submitted it; and per-ring memory is duplicated. The shared topology
// (OwnerThread false) remains supported: any goroutine may Submit, Cancel
// and Wait, several may block in Wait at once, and a submitter enters the
// kernel itself when somebody is blocked.
//
// # The epoll emulation
//
// Epoll is the Linux OS half of the readiness core that it shares with
// the kqueue backend (package evpoll/readiness): the core keeps its slot
// table, FIFOs, pool and wake protocol, and this package supplies
// epoll_ctl, the non-blocking syscalls, the eventfd and epoll_pwait2. It
// keeps the same completion contract as the ring. A descriptor
// is registered once, edge-triggered (EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET),
// at its first op. Submit first tries the non-blocking syscall (accept4,
// recvfrom, sendto, read, write, connect); on EAGAIN the op joins the
// descriptor's read or write FIFO, and an edge runs the FIFO until EAGAIN
// again. Pipes, FIFOs and terminals are polled like sockets, so a read
// of a FIFO whose writer is silent waits without blocking the worker:
// every descriptor epoll polls is non-blocking (sockets are made so, and
// Open passes O_NONBLOCK). Regular files, directories and block devices
// cannot be polled (epoll_ctl says EPERM): they are put back in blocking
// mode, and their Read, Write and Close, and every Open, run on a bounded
// pool of Options.PoolSize goroutines (default 4) that posts the
// completion and kicks the poller through an eventfd, so no worker
// blocks on disk. Wait
// uses epoll_pwait2 with a timespec (5.11+); where it is missing (ENOSYS,
// probed at open) it falls back to epoll_wait with the timeout rounded up
// to whole milliseconds, so it never returns early. Either call returns
// EINTR when a signal reaches the blocked thread (Go's preemption signal
// does, and epoll waits are never restarted): Wait then counts no events
// and waits again (TestEpollWaitInterrupted). Wake writes the eventfd,
// coalesced by the woken flag: a Wake sets it (false → true) before its
// write, and Wait clears it only after its read drained the eventfd, so
// while it is set a write is done or on its way and a Wake that finds it
// set may skip its own; the Wait that clears it reports the wake. Cancel
// completes a waiting op, or a pool op not yet started, at once with
// -ECANCELED; a pool op whose system call runs cannot be interrupted and
// completes with its real result. A
// Close op fails the ops still queued on that descriptor with -ECANCELED.
// Descriptors must be closed through Close ops (or never be reused while
// registered), as with any epoll-based poller.
//
// # Benchmarks
//
//	go test -run '^$' -bench 'Wake|Echo|Topology' -benchtime 20000x -count 5 ./uring
//
// BenchmarkWake, BenchmarkTopology and BenchmarkEchoRoundTrip (64-byte
// messages, both ends on the backend, one goroutine, beside Go net); their
// figures are in docs/PERFORMANCE.md.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package uring
