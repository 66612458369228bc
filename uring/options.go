package uring

// Options configure Open, OpenRing and OpenEpoll. The zero value is a
// sensible default.
type Options struct {
	// Poller selects the backend: "uring", "epoll", or "auto" (io_uring,
	// falling back to epoll when io_uring_setup fails with ENOSYS, EPERM or
	// EINVAL or lacks a needed feature). Empty means the JADE_POLLER
	// environment variable, and "auto" when that is empty too.
	Poller string

	// Entries is the io_uring SQ size (default 256; rounded up to a power
	// of two). CQEntries is the CQ size (default and minimum 2×Entries).
	Entries   uint32
	CQEntries uint32

	// MaxInFlight bounds the ops in flight per backend (submitted and not
	// yet returned by Wait): the most slots the slot table may grow to
	// (default 1<<20, at most 1<<24). The table grows in chunks as ops are
	// submitted, so a large bound costs memory only when used. The default
	// is far above the scheduler engine's own bound on ops in flight
	// (sched.DefaultMaxInFlightIO), so that one is reached first. Submit
	// fails with evpoll.ErrTooMany above MaxInFlight.
	MaxInFlight int

	// OwnerThread says that the calling goroutine, locked to its OS thread
	// with runtime.LockOSThread, owns the backend: Wait and Close must come
	// from that thread. io_uring then sets the ring up with SINGLE_ISSUER|
	// DEFER_TASKRUN|COOP_TASKRUN|TASKRUN_FLAG: completions are posted only
	// when the owner enters the kernel, with no IPIs. This is the
	// per-worker topology (see the package doc). Wake and Cancel still work
	// from any goroutine (a blocked owner is kicked with MSG_RING), and so
	// does Submit unless the SQ is full. Without OwnerThread the ring is
	// shared: any goroutine may call anything. Epoll ignores the option.
	OwnerThread bool

	// Wake selects how io_uring's Wake interrupts a blocked Wait: "msgring"
	// (IORING_OP_MSG_RING from a small private waker ring, the default where
	// supported) or "eventfd" (a READ on an eventfd kept armed in the ring).
	// See doc.go for the measurement behind the default.
	Wake string

	// PoolSize is the number of goroutines of the epoll backend's blocking
	// pool for regular-file ops (default 4).
	PoolSize int
}
