//go:build windows

package iocp

// Handles shared by several Ports. The scheduler opens one Port per
// worker and submits a task's op to the Port of the worker running it, so
// a connection accepted on one worker's port is read on another's after
// the task moved. Windows binds a handle to one completion port for the
// life of the handle (a second CreateIoCompletionPort fails with
// ERROR_INVALID_PARAMETER), and every packet of an op on it goes to that
// port, whichever thread started the op. So the first Port that uses a
// handle is its home; another Port still starts its ops on the handle
// itself (its own slot and ioBlock), and the home port's Wait, finding a
// packet whose ioBlock belongs to another Port, forwards it: it appends
// the packet to that Port's inbox and posts keyForward to that Port's own
// completion port, whose Wait completes the op as if it had dequeued the
// packet itself. The file position of Offset -1 ops and the Append mode
// belong to the handle, not to a Port, so they live in the shared record
// too.
//
// A Port learns that a handle is another's home from the process-wide
// table below, never from the failed association alone: a handle bound to
// a port that is not ours (Go's net package binds its sockets to the
// runtime's port) must not get our OVERLAPPEDs, whose packets that port
// would misread. Entries go when the handle is closed by a Close op, when
// its home Forgets it, and when its home Port closes; after that the
// handle's packets are lost, so ops still in flight on a handle whose home
// has closed never complete (the scheduler closes all its Ports together,
// after its tasks ended).

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/windows"
)

// handleInfo is what every Port of the process shares about a handle
// associated with one of their completion ports.
type handleInfo struct {
	home   *Port // the Port whose completion port the handle is bound to
	append bool  // opened with evpoll.Append
	// pos is the file position of Offset -1 ops on a disk file. Each Port
	// runs its own Offset -1 ops one at a time; a file's ops come from the
	// task owning it, which has one op in flight at a time, so two Ports
	// never move the position at once in practice.
	pos atomic.Int64
}

// handles maps every handle bound to one of this process's Ports.
var handles = struct {
	sync.Mutex
	m map[windows.Handle]*handleInfo
}{m: make(map[windows.Handle]*handleInfo)}

// register records that h has just been bound to b's completion port (an
// entry left by a closed handle whose value was reused is replaced).
func register(h windows.Handle, b *Port, app bool) *handleInfo {
	hi := &handleInfo{home: b, append: app}
	handles.Lock()
	handles.m[h] = hi
	handles.Unlock()
	return hi
}

// unregister forgets h if its home is b, or whatever its home if b is nil.
func unregister(h windows.Handle, b *Port) {
	handles.Lock()
	if hi, ok := handles.m[h]; ok && (b == nil || hi.home == b) {
		delete(handles.m, h)
	}
	handles.Unlock()
}

// associate binds h to b's completion port, or, if h is bound already to
// another Port's, returns that Port's record of it. A handle bound to a
// port that is not ours is an error (ERROR_INVALID_PARAMETER).
func (b *Port) associate(h windows.Handle) (*handleInfo, error) {
	if _, err := windows.CreateIoCompletionPort(h, b.port, keyIO, 0); err != nil {
		handles.Lock()
		hi := handles.m[h]
		handles.Unlock()
		if hi != nil && hi.home != b {
			return hi, nil
		}
		return nil, err
	}
	return register(h, b, false), nil
}

// unregisterAllLocked forgets the handles whose home is b (b is closing:
// their packets will go nowhere). Called with b.g.Mu held.
func (b *Port) unregisterAllLocked() {
	for h, st := range b.fds {
		if st.hi != nil && st.hi.home == b {
			unregister(h, b)
		}
	}
}

// forward hands b a packet of one of b's ops that another Port dequeued,
// and wakes b's Wait with keyForward unless a forward is already pending.
// It takes only b.g.Wake.Mu, a leaf lock, so a Port may forward while holding
// its own mutex.
func (b *Port) forward(e overlappedEntry) {
	b.g.Wake.Mu.Lock()
	defer b.g.Wake.Mu.Unlock()
	if b.gone {
		return // closed: nobody will complete the op
	}
	b.inbox = append(b.inbox, e)
	if len(b.inbox) == 1 {
		b.post(keyForward)
	}
}

// takeInboxLocked completes the packets other Ports forwarded to b.
// Called with b.g.Mu held.
func (b *Port) takeInboxLocked() {
	b.g.Wake.Mu.Lock()
	in := b.inbox
	b.inbox = nil
	b.g.Wake.Mu.Unlock()
	for i := range in {
		b.completeIOLocked(&in[i])
	}
}

// Forget drops what b knows of the handle fd, without closing it: a Port
// cancels its own ops still in the kernel on fd (they complete with
// -ECANCELED and evpoll.FlagCancelled), fails those queued behind its file
// position, and, if fd is bound to b's port, removes it from the table of
// shared handles. A scheduler with one backend per worker calls it on
// every other worker's backend before one of them closes fd: once closed,
// the handle value can be reused for another file or socket, which a
// state kept here would misdescribe. Safe from any goroutine.
func (b *Port) Forget(fd int) {
	h := windows.Handle(uintptr(fd))
	b.g.Mu.Lock()
	defer b.g.Mu.Unlock()
	if b.g.Closed {
		return
	}
	unregister(h, b)
	st, ok := b.fds[h]
	if !ok {
		return
	}
	delete(b.fds, h)
	st.closed = true
	for _, w := range st.ops {
		s := b.slots.At(w)
		s.cancel = true
		b.ctr.Syscalls.Add(1)
		_ = windows.CancelIoEx(h, &s.io.ov) // not nil: that would cancel other Ports' ops too
	}
	q := st.posq
	st.posq = nil
	for _, w := range q {
		b.slots.At(w).cancel = true
		b.finishLocked(w, errCanceled)
	}
}

// Port has the Forget of the backends that keep per-handle state, which
// the scheduler looks for.
var _ interface{ Forget(fd int) } = (*Port)(nil)
