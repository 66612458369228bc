//go:build linux || darwin || freebsd

package readiness

// The blocking pool for descriptors the OS half does not poll: regular
// files, which epoll refuses (EPERM) and kqueue reports as always ready.
// A few goroutines (package evpoll/workpool) run the blocking system
// calls, post the completion under the core's mutex and kick a blocked
// Wait, so no caller of Submit or Wait ever blocks on disk. The slot
// table caps the jobs in flight. A job cancelled while it is queued
// completes at once and is skipped when its turn comes, so that a pool
// kept busy (a slow disk, a hung network file system) does not hold the
// timeouts and cancels of the ops queued behind it.

import (
	"errors"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

type poolJob struct {
	id evpoll.OpID
	op *evpoll.Op
	fd int
}

// toPoolLocked hands slot idx to the pool.
func (b *Core) toPoolLocked(idx int32, s *Slot) {
	s.wait = waitPool
	b.ctr.Pool.Add(1)
	b.pool.Go(poolJob{id: b.slots.ID(idx), op: s.Op, fd: s.Fd})
}

// runPoolJob runs job j on a pool goroutine, unless its op was cancelled
// while it was queued (its slot then completed, and may have moved on).
func (b *Core) runPoolJob(j poolJob) {
	b.g.Mu.Lock()
	_, s := b.slots.Lookup(j.id)
	run := s != nil && s.state == slotActive
	if run {
		s.wait = waitPoolRun
	}
	b.g.Mu.Unlock()
	if !run {
		return
	}
	b.ctr.Syscalls.Add(1)
	b.PostPoolResult(j.id, runFileOp(j.op, j.fd))
}

// PostPoolResult completes op id with res, as a pool job does when its
// system call returns; a stale id (the slot has moved on) only counts in
// Stats.Stale. After Close the slot is released instead, and a
// descriptor an Open returned is closed again, since nobody will ever
// receive it.
func (b *Core) PostPoolResult(id evpoll.OpID, res int32) {
	b.g.Mu.Lock()
	defer b.g.Mu.Unlock()
	idx, s := b.slots.Lookup(id)
	switch {
	case b.g.Closed:
		if s != nil && s.state == slotActive {
			if s.Op.Kind == evpoll.Open && res >= 0 {
				_ = unix.Close(int(res))
			}
			b.release(idx)
		}
	case s == nil || s.state != slotActive:
		b.ctr.Stale.Add(1)
	default:
		b.completeLocked(idx, res)
	}
}

// runFileOp performs one blocking file op and returns its result.
func runFileOp(op *evpoll.Op, fd int) int32 {
	buf := ClampBuf(op.Buf)
	for {
		var n int
		var err error
		switch op.Kind {
		case evpoll.Open:
			n, err = unix.Open(op.Path, unixsock.OpenFlags(op.OpenFlags), op.Mode)
		case evpoll.Read:
			if op.Offset < 0 {
				n, err = unix.Read(fd, buf)
			} else {
				n, err = unix.Pread(fd, buf, op.Offset)
			}
		case evpoll.Write:
			if op.Offset < 0 {
				n, err = unix.Write(fd, buf)
			} else {
				n, err = unix.Pwrite(fd, buf, op.Offset)
			}
		case evpoll.Close:
			return ErrRes(unix.Close(fd))
		case evpoll.Poll:
			return unix.POLLIN // a regular file is always readable
		default:
			return -int32(unix.EINVAL)
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return ErrRes(err)
		}
		return int32(n)
	}
}
