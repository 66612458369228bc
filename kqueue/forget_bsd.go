//go:build darwin || freebsd

package kqueue

// Forget drops the registration of fd, if any, and fails the ops still
// queued on it with -ECANCELED — what a Close op does, without closing the
// descriptor. A scheduler with one backend per worker calls it on every
// other worker's backend before one of them closes fd: the kernel removes
// a closed descriptor's kevents, so a registration kept here would make a
// later descriptor with the same number look registered and never get an
// event. Safe from any goroutine.
func (b *Poller) Forget(fd int) { b.core.Forget(fd) }
