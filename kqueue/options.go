package kqueue

// Options configure [Open]. The zero value is a sensible default.
type Options struct {
	// MaxInFlight bounds the ops in flight (submitted and not yet returned
	// by Wait): the most slots the slot table may grow to (default 1<<20,
	// at most 1<<24). The table grows in chunks as ops are submitted, so a
	// large bound costs memory only when used. The default is far above
	// the scheduler engine's own bound on ops in flight
	// (sched.DefaultMaxInFlightIO), so that one is reached first. Submit
	// fails with evpoll.ErrTooMany above MaxInFlight.
	MaxInFlight int

	// PoolSize is the number of goroutines of the blocking pool for
	// regular-file ops and Open (default 4).
	PoolSize int
}
