//go:build windows

package iocp

// The pool for Open. CreateFileW is synchronous and can block (network
// paths, antivirus filters), so a few goroutines run it, associate the new
// handle with the port, record the completion under the backend mutex and
// kick a blocked Wait, so no caller blocks. Reads and writes need no pool:
// handles opened here are overlapped, and their I/O completes on the
// port. The pool is bounded: size goroutines, all started at the first
// Open. Its job queue grows with use and never blocks; the slot table caps
// the jobs in flight.

import (
	"math"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/workpool"
	"golang.org/x/sys/windows"
)

type poolJob struct {
	id evpoll.OpID
	op *evpoll.Op
}

// openPool is the shared bounded pool (package evpoll/workpool) running
// this backend's opens.
type openPool = workpool.Pool[poolJob]

func newOpenPool(b *Port, size int) *openPool {
	return workpool.New(size, func(j poolJob) {
		b.ctr.Syscalls.Add(3)
		h, kind, err := b.openFile(j.op)
		b.postPoolResult(j, h, kind, err)
	})
}

// toPoolLocked hands slot idx to the pool.
func (b *Port) toPoolLocked(idx int32, s *slot) {
	s.state = slotPool
	b.ctr.Pool.Add(1)
	b.pool.Go(poolJob{id: b.slots.ID(idx), op: s.op})
}

// openFile opens op.Path for overlapped I/O and associates it with the
// port.
func (b *Port) openFile(op *evpoll.Op) (windows.Handle, uint8, error) {
	path, err := windows.UTF16PtrFromString(op.Path)
	if err != nil {
		return 0, 0, windows.ERROR_INVALID_NAME
	}
	access, disp, attrs := openArgs(op.OpenFlags, op.Mode)
	// Not inheritable (no SECURITY_ATTRIBUTES): the close-on-exec of the
	// contract. FILE_SHARE_DELETE lets the file be renamed or removed while
	// open, as on Unix.
	h, err := windows.CreateFile(path, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, disp, attrs|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, 0, err
	}
	if uint64(h) > math.MaxInt32 { // Res cannot carry it (handles are 32-bit significant)
		windows.CloseHandle(h)
		return 0, 0, windows.ERROR_INVALID_HANDLE
	}
	if _, err := windows.CreateIoCompletionPort(h, b.port, keyIO, 0); err != nil {
		windows.CloseHandle(h)
		return 0, 0, err
	}
	kind := fdOther
	if t, err := windows.GetFileType(h); err == nil && t == windows.FILE_TYPE_DISK {
		kind = fdFile
	}
	return h, kind, nil
}

// openArgs maps portable open flags to CreateFileW's access, disposition
// and attributes, as Go's syscall.Open does.
func openArgs(f evpoll.OpenFlag, mode uint32) (access, disp, attrs uint32) {
	switch {
	case f&evpoll.ReadWrite != 0:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	case f&evpoll.WriteOnly != 0:
		access = windows.GENERIC_WRITE
	default:
		access = windows.GENERIC_READ
	}
	if f&evpoll.Append != 0 {
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA
	}
	switch {
	case f&(evpoll.Create|evpoll.Exclusive) == evpoll.Create|evpoll.Exclusive:
		disp = windows.CREATE_NEW
	case f&(evpoll.Create|evpoll.Truncate) == evpoll.Create|evpoll.Truncate:
		disp = windows.CREATE_ALWAYS
	case f&evpoll.Create != 0:
		disp = windows.OPEN_ALWAYS
	case f&evpoll.Truncate != 0:
		disp = windows.TRUNCATE_EXISTING
	default:
		disp = windows.OPEN_EXISTING
	}
	attrs = windows.FILE_ATTRIBUTE_NORMAL
	if f&evpoll.Create != 0 && mode&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	return access, disp, attrs
}

// postPoolResult completes job j, unless its OpID is stale. A handle
// opened for a backend that has closed meanwhile is closed again, since
// nobody will ever receive it.
func (b *Port) postPoolResult(j poolJob, h windows.Handle, kind uint8, err error) {
	b.g.Mu.Lock()
	defer b.g.Mu.Unlock()
	idx, s := b.slots.Lookup(j.id)
	switch {
	case b.g.Closed:
		if err == nil {
			windows.CloseHandle(h)
		}
		if s != nil && s.state == slotPool {
			b.slots.release(idx)
		}
	case s == nil || s.state != slotPool:
		b.ctr.Stale.Add(1)
		if err == nil {
			windows.CloseHandle(h)
		}
	case err != nil:
		b.finishLocked(idx, -int32(errnoOf(err)))
	default:
		app := j.op.OpenFlags&evpoll.Append != 0
		b.fds[h] = &fdState{kind: kind, append: app, hi: register(h, b, app)}
		b.finishLocked(idx, int32(h))
	}
}
