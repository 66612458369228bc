//go:build linux || darwin || freebsd

package readiness

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/workpool"
	"golang.org/x/sys/unix"
)

// OS is the operating-system half of a readiness backend. The core calls
// Register, Unregister, Try and ConnectStart with its mutex held; Kick
// with or without it (from Wake); Poll without it, from any number of
// goroutines at once; Drain with it held, after Poll reported EvWake.
type OS interface {
	// Register registers fd, at its first op, edge-triggered for read and
	// write readiness. file reports a descriptor that is not polled (a
	// regular file, or one the kernel refuses): its ops go to the pool.
	Register(fd int) (file bool, err error)
	// Unregister drops the registration of a polled descriptor that the
	// core forgets (Close op, Forget, Close); never called for files.
	Unregister(fd int)
	// Try performs the read- or write-side op of s once, non-blocking;
	// for Connect it checks the outcome of the connect ConnectStart began.
	// done is false when the op would block (EAGAIN, connect in
	// progress). An Accept that succeeds sets s.Op.Addr to the peer.
	Try(s *Slot) (res int32, done bool)
	// ConnectStart issues connect(2) for the Connect op s (to s.Op.Addr,
	// valid) on its non-blocking socket; done is false while it is in
	// progress.
	ConnectStart(s *Slot) (res int32, done bool)
	// Kick signals the internal wake event, which makes a goroutine
	// blocked in Poll return with EvWake.
	Kick()
	// Drain consumes the wake event after Poll reported it, where the
	// event stays signalled until consumed (an eventfd).
	Drain()
	// Poll blocks until events are ready or rem has passed (rem < 0: no
	// limit, 0: do not block) and fills evs with at most len(evs) events.
	// On an error it returns 0 events.
	Poll(evs []Event, rem time.Duration) (int, error)
}

// Event is one readiness event that Poll reports.
type Event struct {
	Fd    int32 // the descriptor; unused with EvWake
	Flags uint8 // EvRead, EvWrite, EvWake
}

// Event flags.
const (
	EvRead  uint8 = 1 << iota // the descriptor is readable (or hung up, or failed)
	EvWrite                   // the descriptor is writable (or hung up, or failed)
	EvWake                    // the internal wake event fired
)

// Config names a backend and sizes its core.
type Config struct {
	// Name prefixes every error ("epoll: submit: ...").
	Name string
	// PollOp names the wait call in Wait's errors ("wait", "kevent").
	PollOp string
	// MaxInFlight bounds the slot table: the ops submitted and not yet
	// returned by Wait (more than 0, at most slots.Max).
	MaxInFlight int
	// PoolSize is the number of blocking pool goroutines (workpool's
	// default when <= 0).
	PoolSize int
}

// Core is the shared state and logic of a readiness backend. Its methods
// are safe for concurrent use; several goroutines may block in Wait at
// once.
type Core struct {
	g      slots.Gate // g.Mu guards g's state and the fields up to evbufs
	slots  *slots.Table[Slot]
	fds    map[int]*fdState
	ready  []int32 // done slots, in completion order
	kicked bool    // an internal wake-event signal is outstanding
	pool   *workpool.Pool[poolJob]
	evbufs []*[pollBatch]Event // free OS.Poll buffers (evbufLocked)

	os     OS
	name   string
	pollOp string
	// notPending is Cancel's error for an op that has finished, made once:
	// the scheduler cancels the polls a select left behind at every
	// dispatch after one, mostly finished ones.
	notPending error
	pending    atomic.Int64
	ctr        evpoll.Counters
}

// fdState is the per-descriptor registration. Queues hold slot indices.
type fdState struct {
	file   bool // not polled: ops go to the pool
	rq, wq []int32
}

// Slot is one in-flight op. It owns the Go references the op depends on
// (Op, and through it Buf and Path) until Wait has returned the op's
// completion.
type Slot struct {
	Op *evpoll.Op // nil when free
	Fd int        // Op.Fd

	tok    evpoll.Token // handed back in the completion
	state  uint8        // slotFree, slotActive, slotDone
	cancel bool         // set by Cancel; -ECANCELED then carries FlagCancelled
	wait   uint8        // where an active op waits: waitNone, waitRead, waitWrite, waitPool, waitPoolRun
	res    int32
}

// Completion is a finished slot's completion (slots.Deliver).
func (s *Slot) Completion() evpoll.Completion {
	var fl uint32
	if s.cancel && s.res == -int32(unix.ECANCELED) {
		fl = evpoll.FlagCancelled
	}
	return evpoll.Completion{Token: s.tok, Res: s.res, Flags: fl}
}

// Clear drops the slot's Go references before it is released.
func (s *Slot) Clear() { *s = Slot{} }

const (
	slotFree   uint8 = iota
	slotActive       // submitted, not finished
	slotDone         // finished, completion not yet returned by Wait
)

// Where an active op waits (Slot.wait).
const (
	waitNone uint8 = iota
	waitRead
	waitWrite
	waitPool    // queued for the pool: Cancel completes it at once
	waitPoolRun // its blocking system call is running on the pool
)

// New returns a core over os. The caller opens what os needs first and
// closes it after [Core.Close].
func New(c Config, os OS) *Core {
	b := &Core{
		slots:  slots.New[Slot](min(c.MaxInFlight, slots.Max)),
		fds:    make(map[int]*fdState),
		os:     os,
		name:   c.Name,
		pollOp: c.PollOp,

		notPending: fmt.Errorf("%s: cancel: %w", c.Name, evpoll.ErrNotPending),
	}
	b.pool = workpool.New(c.PoolSize, b.runPoolJob)
	return b
}

// Counters are the backend's counters; the OS half adds its system calls
// to Syscalls.
func (b *Core) Counters() *evpoll.Counters { return &b.ctr }

// PoolSize is the number of blocking pool goroutines.
func (b *Core) PoolSize() int { return b.pool.Size() }

// Pending implements evpoll.Backend.
func (b *Core) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Core) Stats() evpoll.Stats { return b.ctr.Snapshot() }

// Submit implements evpoll.Backend. Socket and pipe ops are tried at once;
// file ops and Open go to the pool.
func (b *Core) Submit(op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	return slots.Submit((*waiter)(b), b.name, &b.pending, &b.ctr, op, tok)
}

// release frees slot idx and drops its Go references.
func (b *Core) release(idx int32) {
	b.slots.At(idx).Clear()
	b.slots.Release(idx)
}

// startLocked registers the descriptor if needed and runs or queues the op.
func (b *Core) startLocked(idx int32, s *Slot) {
	st, err := b.fdLocked(s.Fd)
	if err != nil {
		b.completeLocked(idx, ErrRes(err))
		return
	}
	if st.file {
		b.toPoolLocked(idx, s)
		return
	}
	q, wait := &st.rq, waitRead
	if k := s.Op.Kind; k == evpoll.Connect || k == evpoll.Send || k == evpoll.Write {
		q, wait = &st.wq, waitWrite
	}
	if s.Op.Kind == evpoll.Connect {
		if res, done := b.os.ConnectStart(s); done {
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

// try is OS.Try, except for a Poll op, which the core performs itself:
// poll(2) with a zero timeout asks whether the descriptor is readable now
// without consuming anything (the registration's edges tell when to ask
// again).
func (b *Core) try(s *Slot) (res int32, done bool) {
	if s.Op.Kind != evpoll.Poll {
		return b.os.Try(s)
	}
	return PollNow(s.Fd, &b.ctr)
}

// PollNow asks poll(2), without waiting, whether fd is readable (POLLIN,
// POLLRDHUP; POLLERR, POLLHUP and POLLNVAL are always reported): done with
// the event mask when it is, not done when nothing is ready. ctr, if not
// nil, counts the system call.
func PollNow(fd int, ctr *evpoll.Counters) (res int32, done bool) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | pollRdHup}}
	for {
		if ctr != nil {
			ctr.Syscalls.Add(1)
		}
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ErrRes(err), true
		}
		if n == 0 || fds[0].Revents == 0 {
			return 0, false
		}
		return int32(uint16(fds[0].Revents)), true
	}
}

// fdLocked returns the registration of fd, registering it on first use.
func (b *Core) fdLocked(fd int) (*fdState, error) {
	if st, ok := b.fds[fd]; ok {
		return st, nil
	}
	file, err := b.os.Register(fd)
	if err != nil {
		return nil, err
	}
	st := &fdState{file: file}
	b.fds[fd] = st
	return st, nil
}

// closeLocked handles a Close op: it forgets the descriptor, fails the ops
// still queued on it, and closes it (on the pool for files).
func (b *Core) closeLocked(idx int32, s *Slot) {
	if st := b.forgetLocked(s.Fd); st != nil && st.file {
		b.toPoolLocked(idx, s)
		return
	}
	b.ctr.Syscalls.Add(1)
	b.completeLocked(idx, ErrRes(unix.Close(s.Fd)))
}

// Forget drops the registration of fd, if any, and fails the ops still
// queued on it with -ECANCELED: what a Close op does, without closing the
// descriptor. The kernel drops a closed descriptor's registration, so a
// backend that kept it would take a later descriptor with the same number
// for registered and never see its edges. A scheduler with one backend
// per worker calls it on every other worker's backend before one of them
// closes fd (io_uring keeps no per-descriptor state and has no Forget).
// Safe from any goroutine.
func (b *Core) Forget(fd int) {
	b.g.Mu.Lock()
	defer b.g.Mu.Unlock()
	if !b.g.Closed {
		b.forgetLocked(fd)
	}
}

// forgetLocked forgets fd's registration and fails the ops queued on it
// with -ECANCELED (they could never complete). It returns the registration
// it dropped, nil when fd had none.
func (b *Core) forgetLocked(fd int) *fdState {
	st, ok := b.fds[fd]
	if !ok {
		return nil
	}
	delete(b.fds, fd)
	if !st.file {
		b.os.Unregister(fd)
	}
	for _, q := range [][]int32{st.rq, st.wq} {
		for _, w := range q {
			b.slots.At(w).cancel = true
			b.completeLocked(w, -int32(unix.ECANCELED))
		}
	}
	return st
}

// completeLocked records the result of slot idx and queues it for Wait.
// The slot stays taken (slotDone) until Wait returns the completion, so
// MaxInFlight also bounds undelivered completions.
func (b *Core) completeLocked(idx int32, res int32) {
	s := b.slots.At(idx)
	s.state, s.res, s.wait = slotDone, res, waitNone
	b.ready = append(b.ready, idx)
	b.kickLocked()
}

// kickLocked makes a goroutine blocked in OS.Poll notice b.ready.
func (b *Core) kickLocked() {
	if b.g.Waiters > 0 && !b.kicked {
		b.kicked = true
		b.os.Kick()
	}
}

// Cancel implements evpoll.Backend. An op waiting for readiness, or
// queued for the pool and not yet started (a Close op excepted: it must
// still close), completes at once with -ECANCELED; an op whose system
// call runs on the pool cannot be interrupted and completes with its real
// result. An op that has finished, its completion returned or not, is
// ErrNotPending.
func (b *Core) Cancel(id evpoll.OpID) error {
	b.g.Mu.Lock()
	defer b.g.Mu.Unlock()
	if b.g.Closed {
		return fmt.Errorf("%s: cancel: %w", b.name, evpoll.ErrClosed)
	}
	idx, s := b.slots.Lookup(id)
	if s == nil || s.state == slotDone {
		return b.notPending
	}
	if s.cancel {
		return nil
	}
	s.cancel = true
	b.ctr.Cancelled.Add(1)
	if st := b.fds[s.Fd]; st != nil && (s.wait == waitRead || s.wait == waitWrite) {
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
	} else if s.wait == waitPool && s.Op.Kind != evpoll.Close {
		b.completeLocked(idx, -int32(unix.ECANCELED)) // runPoolJob skips it
	}
	return nil
}
