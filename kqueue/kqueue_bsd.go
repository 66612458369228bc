//go:build darwin || freebsd

package kqueue

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// Poller is an evpoll.Backend on kqueue. All methods are safe for
// concurrent use; several goroutines may block in Wait at once.
type Poller struct {
	mu      sync.Mutex // guards the fields up to pool
	slots   *slotTable
	fds     map[int]*fdState
	ready   []int32 // done slots, in completion order
	closed  bool
	waiters int  // goroutines blocked in kevent
	kicked  bool // an internal user-event trigger is outstanding
	pool    *filePool

	kq      int
	woken   atomic.Bool // a Wake is outstanding
	wakeMu  sync.Mutex  // guards wakeOff against Close
	wakeOff bool
	pending atomic.Int64
	reason  string
	ctr     evpoll.Counters
}

var _ evpoll.Backend = (*Poller)(nil)

// fdState is the per-descriptor registration. Queues hold slot indices.
type fdState struct {
	file   bool // a regular file (or unpollable): ops go to the pool
	rq, wq []int32
}

// wakeIdent is the ident of the EVFILT_USER event behind Wake. User
// events have their own ident space, so 0 never collides with fd 0.
const wakeIdent = 0

// maxWait bounds one kevent timeout; Wait loops until its deadline.
const maxWait = time.Hour

// Open creates a kqueue backend.
func Open(o Options) (evpoll.Backend, error) {
	return New(o)
}

// New creates a kqueue backend and returns its concrete type.
func New(o Options) (*Poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: kqueue: %w", err)
	}
	unix.CloseOnExec(kq)
	var ch [1]unix.Kevent_t
	unix.SetKevent(&ch[0], wakeIdent, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, ch[:], nil, nil); err != nil {
		unix.Close(kq)
		return nil, fmt.Errorf("kqueue: register user event: %w", err)
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	n = min(n, maxSlots)
	b := &Poller{slots: newSlotTable(n), fds: make(map[int]*fdState), kq: kq}
	b.pool = newFilePool(b, o.PoolSize)
	b.reason = fmt.Sprintf("kqueue pool=%d", b.pool.Size())
	return b, nil
}

// Name implements evpoll.Backend.
func (b *Poller) Name() string { return "kqueue" }

// Reason describes the backend's configuration, for logs.
func (b *Poller) Reason() string { return b.reason }

// Pending implements evpoll.Backend.
func (b *Poller) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Poller) Stats() evpoll.Stats { return b.ctr.Snapshot() }

// Submit implements evpoll.Backend. Socket and pipe ops are tried at once;
// file ops and Open go to the pool.
func (b *Poller) Submit(op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	if op == nil || op.Kind >= evpoll.NumKinds {
		return 0, fmt.Errorf("kqueue: submit: %w", evpoll.ErrInvalidOp)
	}
	var sa unix.Sockaddr
	switch op.Kind {
	case evpoll.Connect:
		var err error
		if sa, err = toSockaddr(op.Addr); err != nil {
			return 0, fmt.Errorf("kqueue: submit: connect: %w: %w", evpoll.ErrInvalidOp, err)
		}
	case evpoll.Open:
		for i := 0; i < len(op.Path); i++ {
			if op.Path[i] == 0 {
				return 0, fmt.Errorf("kqueue: submit: open: NUL in path: %w", evpoll.ErrInvalidOp)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, fmt.Errorf("kqueue: submit: %w", evpoll.ErrClosed)
	}
	idx, s, ok := b.slots.alloc(op, tok)
	if !ok {
		return 0, fmt.Errorf("kqueue: submit: %w", evpoll.ErrTooMany)
	}
	s.sa = sa
	id := b.slots.ID(idx)
	b.pending.Add(1)
	b.ctr.Submitted.Add(1)
	b.ctr.Ops[op.Kind].Add(1)
	switch op.Kind {
	case evpoll.Nop:
		b.completeLocked(idx, 0)
	case evpoll.Open:
		b.toPoolLocked(idx, s)
	case evpoll.Close:
		b.closeLocked(idx, s)
	default:
		b.startLocked(idx, s)
	}
	return id, nil
}

// startLocked registers the descriptor if needed and runs or queues the op.
func (b *Poller) startLocked(idx int32, s *slot) {
	st, err := b.fdLocked(s.fd)
	if err != nil {
		b.completeLocked(idx, errRes(err))
		return
	}
	if st.file {
		b.toPoolLocked(idx, s)
		return
	}
	q, wait := &st.rq, waitRead
	if k := s.op.Kind; k == evpoll.Connect || k == evpoll.Send || k == evpoll.Write {
		q, wait = &st.wq, waitWrite
	}
	if s.op.Kind == evpoll.Connect {
		if res, done := b.connectStart(s); done {
			b.completeLocked(idx, res)
			return
		}
	} else if len(*q) == 0 { // FIFO: behind a waiting op we would only see EAGAIN
		if res, done := b.try(s); done {
			b.completeLocked(idx, res)
			return
		}
	}
	s.wait = wait
	*q = append(*q, idx)
}

// fdLocked returns the registration of fd, registering it on first use.
// Regular files and directories (always "ready" to kqueue) and
// descriptors kqueue refuses become pool descriptors.
func (b *Poller) fdLocked(fd int) (*fdState, error) {
	if st, ok := b.fds[fd]; ok {
		return st, nil
	}
	if fd < 0 {
		return nil, unix.EBADF
	}
	st := &fdState{}
	var stat unix.Stat_t
	b.ctr.Syscalls.Add(1)
	if err := unix.Fstat(fd, &stat); err != nil {
		return nil, err
	}
	switch stat.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR:
		st.file = true
	default:
		if stat.Mode&unix.S_IFMT == unix.S_IFSOCK {
			noSigpipe(fd)
		}
		if err := unix.SetNonblock(fd, true); err != nil {
			return nil, err
		}
		var ch [2]unix.Kevent_t
		unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, unix.EV_ADD|unix.EV_CLEAR)
		unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, unix.EV_ADD|unix.EV_CLEAR)
		b.ctr.Syscalls.Add(1)
		if _, err := unix.Kevent(b.kq, ch[:], nil, nil); err != nil {
			if errors.Is(err, unix.EBADF) {
				return nil, err
			}
			// Not pollable (some devices): undo a half registration and
			// treat it like a file. The pool makes blocking calls on a
			// non-blocking descriptor, so put it back to blocking mode.
			unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, unix.EV_DELETE)
			unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, unix.EV_DELETE)
			_, _ = unix.Kevent(b.kq, ch[:], nil, nil)
			_ = unix.SetNonblock(fd, false)
			st.file = true
		}
	}
	b.fds[fd] = st
	return st, nil
}

// closeLocked handles a Close op: it forgets the descriptor, fails the ops
// still queued on it with -ECANCELED (they could never complete), and
// closes it (on the pool for files). Closing removes its kevents.
func (b *Poller) closeLocked(idx int32, s *slot) {
	st, ok := b.fds[s.fd]
	if ok {
		delete(b.fds, s.fd)
		for _, q := range [][]int32{st.rq, st.wq} {
			for _, w := range q {
				b.slots.At(w).cancel = true
				b.completeLocked(w, -int32(unix.ECANCELED))
			}
		}
		if st.file {
			b.toPoolLocked(idx, s)
			return
		}
	}
	b.ctr.Syscalls.Add(1)
	b.completeLocked(idx, errRes(unix.Close(s.fd)))
}

// clampBuf bounds a buffer so that its byte count fits Completion.Res.
func clampBuf(p []byte) []byte {
	if len(p) > math.MaxInt32 {
		return p[:math.MaxInt32]
	}
	return p
}

// try performs a read- or write-side op once, non-blocking. done is false
// on EAGAIN.
func (b *Poller) try(s *slot) (res int32, done bool) {
	op := s.op
	buf := clampBuf(op.Buf)
	for {
		b.ctr.Syscalls.Add(1)
		var n int
		var err error
		switch op.Kind {
		case evpoll.Accept:
			var sa unix.Sockaddr
			n, sa, err = accept(s.fd)
			if err == nil {
				op.Addr = fromSockaddr(sa)
			}
		case evpoll.Recv:
			n, err = unix.Read(s.fd, buf)
		case evpoll.Send:
			n, err = unix.SendmsgN(s.fd, buf, nil, nil, sendFlags)
		case evpoll.Read:
			if op.Offset < 0 {
				n, err = unix.Read(s.fd, buf)
			} else {
				n, err = unix.Pread(s.fd, buf, op.Offset)
			}
		case evpoll.Write:
			if op.Offset < 0 {
				n, err = unix.Write(s.fd, buf)
			} else {
				n, err = unix.Pwrite(s.fd, buf, op.Offset)
			}
		case evpoll.Connect:
			return b.connectCheck(s)
		default:
			return -int32(unix.EINVAL), true
		}
		switch {
		case err == nil:
			return int32(n), true
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return 0, false
		}
		return errRes(err), true
	}
}

// connectStart issues connect(2) on the non-blocking socket.
func (b *Poller) connectStart(s *slot) (int32, bool) {
	b.ctr.Syscalls.Add(1)
	err := unix.Connect(s.fd, s.sa)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, unix.EINPROGRESS), errors.Is(err, unix.EINTR), errors.Is(err, unix.EALREADY):
		return 0, false // EINTR: the connection goes on asynchronously
	}
	return errRes(err), true
}

// connectCheck runs when the connecting socket became writable: SO_ERROR
// holds the outcome; a still-unconnected socket keeps waiting.
func (b *Poller) connectCheck(s *slot) (int32, bool) {
	b.ctr.Syscalls.Add(1)
	v, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return errRes(err), true
	}
	switch e := unix.Errno(v); e {
	case 0:
	case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
		return 0, false
	default:
		return -int32(e), true
	}
	b.ctr.Syscalls.Add(1)
	if _, err := unix.Getpeername(s.fd); errors.Is(err, unix.ENOTCONN) {
		return 0, false
	}
	return 0, true
}

// completeLocked records the result of slot idx and queues it for Wait.
// The slot stays taken (slotDone) until Wait returns the completion, so
// MaxInFlight also bounds undelivered completions.
func (b *Poller) completeLocked(idx int32, res int32) {
	s := b.slots.At(idx)
	s.state, s.res, s.wait = slotDone, res, waitNone
	b.ready = append(b.ready, idx)
	b.kickLocked()
}

// kickLocked makes a goroutine blocked in kevent notice b.ready.
func (b *Poller) kickLocked() {
	if b.waiters > 0 && !b.kicked {
		b.kicked = true
		b.trigger()
	}
}

// trigger fires the user event. Its error is ignored: it can only fail
// when the kqueue is gone, and then nobody waits on it.
func (b *Poller) trigger() {
	var ch [1]unix.Kevent_t
	unix.SetKevent(&ch[0], wakeIdent, unix.EVFILT_USER, 0)
	ch[0].Fflags = unix.NOTE_TRIGGER
	b.ctr.Syscalls.Add(1)
	_, _ = unix.Kevent(b.kq, ch[:], nil, nil)
}

// Cancel implements evpoll.Backend. An op waiting for readiness completes
// at once with -ECANCELED; an op on the file pool cannot be interrupted and
// completes with its real result.
func (b *Poller) Cancel(id evpoll.OpID) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("kqueue: cancel: %w", evpoll.ErrClosed)
	}
	idx, s := b.slots.Lookup(id)
	if s == nil {
		return fmt.Errorf("kqueue: cancel: %w", evpoll.ErrNotPending)
	}
	if s.state == slotDone {
		return fmt.Errorf("kqueue: cancel: %w", evpoll.ErrNotPending)
	}
	if s.cancel {
		return nil
	}
	s.cancel = true
	b.ctr.Cancelled.Add(1)
	if st := b.fds[s.fd]; st != nil && (s.wait == waitRead || s.wait == waitWrite) {
		q := &st.rq
		if s.wait == waitWrite {
			q = &st.wq
		}
		for i, w := range *q {
			if w == idx {
				*q = append((*q)[:i], (*q)[i+1:]...)
				break
			}
		}
		b.completeLocked(idx, -int32(unix.ECANCELED))
	}
	return nil
}

// Wait implements evpoll.Backend with kevent(2) and a timespec timeout.
func (b *Poller) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	if len(out) == 0 {
		return 0, fmt.Errorf("kqueue: wait: empty completion buffer: %w", evpoll.ErrInvalidOp)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	var evs [128]unix.Kevent_t
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return 0, fmt.Errorf("kqueue: wait: %w", evpoll.ErrClosed)
		}
		if n := b.deliverLocked(out); n > 0 {
			b.mu.Unlock()
			return n, nil
		}
		rem := time.Duration(-1)
		switch {
		case timeout == 0:
			rem = 0
		case timeout > 0:
			if rem = time.Until(deadline); rem < 0 {
				rem = 0
			}
		}
		b.waiters++
		b.mu.Unlock()
		nev, err := b.kevent(evs[:], rem)
		b.mu.Lock()
		b.waiters--
		if err != nil && !errors.Is(err, unix.EINTR) {
			b.mu.Unlock()
			return 0, fmt.Errorf("kqueue: kevent: %w", err)
		}
		woke := b.handleLocked(evs[:nev])
		n := b.deliverLocked(out)
		b.mu.Unlock()
		if n > 0 || woke || rem == 0 {
			return n, nil
		}
	}
}

// kevent waits for events; rem < 0 blocks without limit. It returns the
// number of events, or 0 with an error: x/sys returns -1 with the error,
// and Wait slices evs by the count even after EINTR (a signal to the
// blocked thread, Go's preemption signal among them), with b.mu held
// (as the epoll backend does: uring/epoll_linux.go).
func (b *Poller) kevent(evs []unix.Kevent_t, rem time.Duration) (int, error) {
	b.ctr.Syscalls.Add(1)
	var n int
	var err error
	if rem < 0 {
		n, err = unix.Kevent(b.kq, nil, evs, nil)
	} else {
		ts := unix.NsecToTimespec(int64(min(rem, maxWait)))
		n, err = unix.Kevent(b.kq, nil, evs, &ts)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// deliverLocked moves ready completions into out and releases their slots.
func (b *Poller) deliverLocked(out []evpoll.Completion) int {
	n := min(len(out), len(b.ready))
	for i, idx := range b.ready[:n] {
		s := b.slots.At(idx)
		var fl uint32
		if s.cancel && s.res == -int32(unix.ECANCELED) {
			fl = evpoll.FlagCancelled
		}
		out[i] = evpoll.Completion{Token: s.tok, Res: s.res, Flags: fl}
		b.slots.release(idx)
	}
	if n > 0 {
		b.ready = b.ready[:copy(b.ready, b.ready[n:])]
		b.pending.Add(-int64(n))
		b.ctr.Completed.Add(uint64(n))
	}
	return n
}

// handleLocked runs the queues of every descriptor that reported an event
// and consumes the user event. It reports whether a Wake was observed.
func (b *Poller) handleLocked(evs []unix.Kevent_t) (woke bool) {
	for i := range evs {
		ev := &evs[i]
		if ev.Filter == unix.EVFILT_USER {
			b.kicked = false
			if b.woken.Swap(false) {
				b.ctr.WakeUps.Add(1)
				woke = true
			}
			continue
		}
		st := b.fds[int(ev.Ident)]
		if st == nil || st.file {
			continue // closed since the event was queued
		}
		switch ev.Filter {
		case unix.EVFILT_READ:
			b.runQueueLocked(&st.rq)
		case unix.EVFILT_WRITE:
			b.runQueueLocked(&st.wq)
		}
	}
	return woke
}

// runQueueLocked completes queued ops in order until one would block.
func (b *Poller) runQueueLocked(q *[]int32) {
	k := 0
	for ; k < len(*q); k++ {
		idx := (*q)[k]
		res, done := b.try(b.slots.At(idx))
		if !done {
			break
		}
		b.completeLocked(idx, res)
	}
	if k > 0 {
		*q = (*q)[:copy(*q, (*q)[k:])] // keep the backing array
	}
}

// Wake implements evpoll.Backend by triggering the user event (coalesced).
func (b *Poller) Wake() error {
	if !b.woken.CompareAndSwap(false, true) {
		return nil
	}
	b.wakeMu.Lock()
	defer b.wakeMu.Unlock()
	if b.wakeOff {
		return fmt.Errorf("kqueue: wake: %w", evpoll.ErrClosed)
	}
	b.ctr.Wakes.Add(1)
	b.trigger()
	return nil
}

// Close implements evpoll.Backend. Pool jobs already running finish first
// (they are blocking system calls); queued socket ops are dropped.
// Descriptors accepted or opened for completions that were never returned
// are closed; the descriptors the ops named belong to the caller and stay
// open.
func (b *Poller) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.wakeMu.Lock()
	b.wakeOff = true
	b.wakeMu.Unlock()
	// Nobody may be in kevent on kq when it is closed. One trigger wakes
	// one waiter, so fire again while any is left.
	waitFor(&b.mu, func() bool {
		if b.waiters > 0 {
			b.trigger()
		}
		return b.waiters == 0
	})
	// Descriptors accepted or opened for completions nobody will receive.
	for _, idx := range b.ready {
		s := b.slots.At(idx)
		if k := s.op.Kind; (k == evpoll.Accept || k == evpoll.Open) && s.res >= 0 {
			_ = unix.Close(int(s.res))
		}
	}
	b.fds, b.ready = nil, nil
	b.mu.Unlock()
	b.pool.Stop()
	b.pending.Store(0)
	if err := unix.Close(b.kq); err != nil {
		return fmt.Errorf("kqueue: close: %w", err)
	}
	return nil
}

// waitFor releases mu until cond holds (or a second has passed), polling.
// mu is held on entry and on return.
func waitFor(mu *sync.Mutex, cond func() bool) {
	for deadline := time.Now().Add(time.Second); !cond() && time.Now().Before(deadline); {
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
	}
}

// errRes turns an error into a negative errno result.
func errRes(err error) int32 {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return -int32(e)
	}
	return -int32(unix.EIO)
}
