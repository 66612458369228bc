//go:build darwin || freebsd

package kqueue

// The blocking pool for regular files, which kqueue reports as always
// ready. A few goroutines run the blocking system calls, post the
// completion under the backend mutex and trigger the user event, so no
// caller ever blocks on disk. The pool is bounded: size goroutines, all
// started at the first file op. Its job queue grows with use and never
// blocks; the slot table caps the jobs in flight.

import (
	"errors"

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
// this backend's file ops.
type filePool = workpool.Pool[poolJob]

func newFilePool(b *Poller, size int) *filePool {
	return workpool.New(size, func(j poolJob) {
		b.ctr.Syscalls.Add(1)
		b.postPoolResult(j, runFileOp(j.op, j.fd))
	})
}

// toPoolLocked hands slot idx to the pool.
func (b *Poller) toPoolLocked(idx int32, s *slot) {
	s.wait = waitPool
	b.ctr.Pool.Add(1)
	b.pool.Go(poolJob{id: b.slots.ID(idx), op: s.op, fd: s.fd})
}

// postPoolResult completes job j with res, unless its OpID is stale. A
// descriptor opened for a backend that has closed meanwhile is closed
// again, since nobody will ever receive it.
func (b *Poller) postPoolResult(j poolJob, res int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	idx, s := b.slots.Lookup(j.id)
	switch {
	case b.closed:
		if j.op.Kind == evpoll.Open && res >= 0 {
			_ = unix.Close(int(res))
		}
		if s != nil && s.state == slotActive {
			b.slots.release(idx)
		}
	case s == nil || s.state != slotActive:
		b.ctr.Stale.Add(1)
	default:
		b.completeLocked(idx, res)
	}
}

// runFileOp performs one blocking file op and returns its result.
func runFileOp(op *evpoll.Op, fd int) int32 {
	buf := clampBuf(op.Buf)
	for {
		var n int
		var err error
		switch op.Kind {
		case evpoll.Open:
			n, err = unix.Open(op.Path, openFlags(op.OpenFlags), op.Mode)
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
			return errRes(unix.Close(fd))
		default:
			return -int32(unix.EINVAL)
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return errRes(err)
		}
		return int32(n)
	}
}

// openFlags maps portable open flags to O_* bits (always O_CLOEXEC).
func openFlags(f evpoll.OpenFlag) int {
	fl := unix.O_CLOEXEC
	switch {
	case f&evpoll.ReadWrite != 0:
		fl |= unix.O_RDWR
	case f&evpoll.WriteOnly != 0:
		fl |= unix.O_WRONLY
	default:
		fl |= unix.O_RDONLY
	}
	if f&evpoll.Create != 0 {
		fl |= unix.O_CREAT
	}
	if f&evpoll.Truncate != 0 {
		fl |= unix.O_TRUNC
	}
	if f&evpoll.Append != 0 {
		fl |= unix.O_APPEND
	}
	if f&evpoll.Exclusive != 0 {
		fl |= unix.O_EXCL
	}
	return fl
}
