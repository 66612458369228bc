//go:build linux

package uring

// The epoll backend's blocking pool for regular files, which epoll cannot
// poll (epoll_ctl fails with EPERM). A few goroutines run the blocking
// syscalls, post the completion under the backend mutex and kick a
// blocked Wait through the eventfd, so no scheduler worker ever blocks on
// disk. The pool is bounded: size goroutines, all started at the first file
// op. Its job queue grows with use and never blocks; the slot table caps
// the jobs in flight.

import (
	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/evpoll/workpool"
	"golang.org/x/sys/unix"
)

type poolJob struct {
	id evpoll.OpID
	op *evpoll.Op
	fd int
}

// filePool is the shared bounded pool (package evpoll/workpool) running
// the epoll backend's file ops.
type filePool = workpool.Pool[poolJob]

func newFilePool(b *Epoll, size int) *filePool {
	return workpool.New(size, func(j poolJob) {
		b.ctr.Syscalls.Add(1)
		b.postPoolResult(j.id, runFileOp(j.op, j.fd))
	})
}

// toPoolLocked hands slot idx to the pool.
func (b *Epoll) toPoolLocked(idx int32, s *slot) {
	s.wait = waitPool
	b.ctr.Pool.Add(1)
	b.pool.Go(poolJob{id: b.slots.ID(idx), op: s.op, fd: s.fd})
}

// postPoolResult completes op id with res, unless id is stale.
func (b *Epoll) postPoolResult(id evpoll.OpID, res int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	idx, s := b.slots.lookup(id)
	switch {
	case s == nil || s.state != slotActive:
		b.ctr.Stale.Add(1)
	case b.closed:
		b.slots.release(idx)
	default:
		b.completeLocked(idx, res)
	}
}

// runFileOp performs one blocking file op and returns its result.
func runFileOp(op *evpoll.Op, fd int) int32 {
	for {
		var n int
		var err error
		switch op.Kind {
		case evpoll.Open:
			n, err = unix.Open(op.Path, openFlags(op.OpenFlags), op.Mode)
		case evpoll.Read:
			if op.Offset < 0 {
				n, err = unix.Read(fd, op.Buf)
			} else {
				n, err = unix.Pread(fd, op.Buf, op.Offset)
			}
		case evpoll.Write:
			if op.Offset < 0 {
				n, err = unix.Write(fd, op.Buf)
			} else {
				n, err = unix.Pwrite(fd, op.Buf, op.Offset)
			}
		case evpoll.Close:
			return errRes(unix.Close(fd))
		default:
			return -int32(unix.EINVAL)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return errRes(err)
		}
		return int32(n)
	}
}
