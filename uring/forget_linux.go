package uring

// Forget drops the epoll backend's registration of fd, if it has one, and
// fails the ops still queued on it with -ECANCELED — what a Close op does,
// without closing the descriptor. A scheduler with one backend per worker
// calls it on every other worker's backend before one of them closes fd:
// the kernel removes a closed descriptor from every epoll set, so a
// registration kept here would make a later descriptor with the same
// number look registered and never get an edge. Safe from any goroutine.
// io_uring keeps no per-descriptor state and needs no Forget.
func (b *Epoll) Forget(fd int) { b.core.Forget(fd) }
