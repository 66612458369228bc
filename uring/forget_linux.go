package uring

import "golang.org/x/sys/unix"

// Forget drops the epoll backend's registration of fd, if it has one, and
// fails the ops still queued on it with -ECANCELED — what a Close op does,
// without closing the descriptor. A scheduler with one backend per worker
// calls it on every other worker's backend before one of them closes fd:
// the kernel removes a closed descriptor from every epoll set, so a
// registration kept here would make a later descriptor with the same
// number look registered and never get an edge. Safe from any goroutine.
// io_uring keeps no per-descriptor state and needs no Forget.
func (b *Epoll) Forget(fd int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.fds[fd]
	if !ok || b.closed {
		return
	}
	delete(b.fds, fd)
	if !st.file {
		b.ctr.Syscalls.Add(1)
		_ = unix.EpollCtl(b.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	for _, q := range [][]int32{st.rq, st.wq} {
		for _, w := range q {
			b.slots.At(w).cancel = true
			b.completeLocked(w, -int32(unix.ECANCELED))
		}
	}
}
