package chans

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"unsafe"
)

// A Select waits on several channel operations at once — receives and
// sends, each a case, and cases of other kinds (Other: an event, a
// socket, a task's end) — and performs exactly one of them. A case set is
// built once (Recv, Send) and reused by any number of waits; a wait costs
// O(N) in its N cases and, in steady state, allocates nothing: the lock
// order is sorted when a case is added, the poll order is a scratch slice
// shuffled in place, and a send case keeps its message until a wait sends
// it.
//
// # Exactly one case
//
// A wait (Wait) locks the mutexes of every channel of the set, in the
// order of their addresses (each once, so that two selects and any
// channel operation cannot deadlock), and polls the cases in a random
// order: the first ready one is performed there, under the locks, so
// nothing else can take effect; when several are ready each is chosen
// with equal probability, as Go chooses. When none is ready the waiter is
// armed (SelWaiter.Arm) and parked in the queue of every case's channel,
// still under all the locks, so no case can fire before every one is
// registered. A party of one of those channels that meets the parked case
// ends the wait through SelWaiter.WakeCase, whose one compare-and-swap on
// the wait word (the bus: CompleteHostFrom) decides it against every
// other case, the timer and a cancel: exactly one wins. The entries of
// the cases that lost stay in their channels' queues, stale, and pass
// nothing (a losing channel keeps its message; a send case that lost
// enqueued nothing), until a party pops them or a compaction drops them.
//
// A stale entry of an earlier wait of the same Select is the same case of
// the same set: when it meets a later wait it ends that wait with that
// case, as the fresh entry would (the wait's own wake token decides) —
// except a send case's entry once its case is spent (its message sent,
// by that wait or by another entry of the same case, and no new one
// set): it offers nothing and a receiver skips it (senderLive), even
// while the Select waits again.
//
// # Messages of send cases
//
// A send case holds its message (Msg, charged to its sender's budget)
// from the first wait that offers it until a wait sends it; the message
// is not counted by the channel until then (HeldBytes). Release gives the
// charges of unsent messages back; a cleanup does it for a Select that
// becomes unreachable.
type Select struct {
	cases []selCase
	// lock is the order in which a wait locks the channels: the case
	// indices of the distinct channels, sorted by channel address.
	lock []int
	perm []int // poll order scratch, shuffled by every wait
	// pend is a wait's scratch of deferred cases not polled yet (Deferred);
	// its capacity is the number of cases, so a wait allocates nothing.
	pend []int
	// w is the waiter of the parked wait. Written under every case's
	// channel mutex (Wait), read under one of them (a wake).
	w SelWaiter
	// unsent gives back the charges of send cases' messages when the
	// Select is collected; shared with the cleanup (no pointer to s).
	unsent *[]*Msg
}

// Other is a case that is not a channel's (the bus: an event's wait). A
// wait locks it with the channels, in the order of Key among theirs,
// polls it (PollLocked: perform the case if it is ready, as taking an
// event's kept signal) and, when no case is ready, parks it as case i
// (ParkLocked, after SelWaiter.Arm: its wake must end the wait through
// the same wait word, with Result i64 i<<1 for the bus). A wake of it
// that loses must leave its source as it was (an event keeps its signal).
type Other interface {
	Lock()
	Unlock()
	PollLocked() bool
	ParkLocked(i int)
	Key() uintptr
}

// Deferred marks an Other case whose poll costs more than a look (a
// system call) and whose ParkLocked finds its readiness by itself (the
// bus: a socket's case). A wait polls it only when that can decide the
// wait: before performing a case that comes after it in the wait's random
// order (so each ready case is still chosen with equal probability), or
// at the end of a wait that will not park (a poll). A wait that finds no
// case ready parks without polling it.
type Deferred interface {
	Other
	Deferred()
}

// selCase is one case.
type selCase struct {
	c        *Chan // nil for an Other case
	o        Other
	deferred bool // o is Deferred
	send     bool
	// m is a send case's message for the next wait (nil: none made yet,
	// or the last one was sent). Written only by the Select's owner,
	// under c's mutex; read under it by a party that meets the case's
	// entry (before its wake, which decides whether it takes m).
	m  *Msg
	cw caseWaiter
}

// caseWaiter is a case's entry in its channel's queue.
type caseWaiter struct {
	s *Select
	i int
}

// Live reports whether the wait of the case's Select has not ended.
func (cw *caseWaiter) Live() bool { return cw.s.w != nil && cw.s.w.Live() }

// Wake ends the Select's wait with this case.
func (cw *caseWaiter) Wake(r Result) bool {
	if r.Msg != nil {
		r.Msg.selCase = int32(cw.i)
	}
	return cw.s.w != nil && cw.s.w.WakeCase(cw.i, r)
}

// msg returns the message of a send case's entry.
func (cw *caseWaiter) msg() *Msg { return cw.s.cases[cw.i].m }

// SelWaiter is the waiting party of a Select's parked wait. Arm starts a
// wait (before any case is registered); WakeCase ends it with case i and
// r (a Result as Waiter.Wake gets it), reporting false when the wait
// already ended otherwise; Live reports whether the wait has not ended.
// WakeCase is called with the case's channel mutex held and must not call
// back into a channel.
type SelWaiter interface {
	Arm()
	WakeCase(i int, r Result) bool
	Live() bool
}

// Fired says what a wait did.
type Fired struct {
	Case   int  // the case that took effect; -1: none (the wait parked)
	Msg    *Msg // a receive case's message (the caller owns it)
	Closed bool // the case's channel is closed (a receive got no message; a send sent nothing)
}

// ErrNoCases is returned by Wait for a Select without cases.
var ErrNoCases = errors.New("select has no cases")

// NewSelect returns an empty Select.
func NewSelect() *Select {
	s := &Select{unsent: new([]*Msg)}
	runtime.AddCleanup(s, func(u *[]*Msg) {
		for _, m := range *u {
			m.Release()
		}
	}, s.unsent)
	return s
}

// Len returns the number of cases.
func (s *Select) Len() int { return len(s.cases) }

// Case returns case i's channel (nil for an Other case) and whether it is
// a send.
func (s *Select) Case(i int) (*Chan, bool) { return s.cases[i].c, s.cases[i].send }

func (s *Select) add(c *Chan, send bool) int {
	i := len(s.cases)
	s.cases = append(s.cases, selCase{c: c, send: send})
	// The caseWaiters point into cases: rebuild them after a grow.
	for j := range s.cases {
		s.cases[j].cw = caseWaiter{s, j}
	}
	s.sortIn(i)
	return i
}

// key is case i's place in the lock order.
func (s *Select) key(i int) uintptr {
	if sc := &s.cases[i]; sc.c != nil {
		return uintptr(unsafe.Pointer(sc.c))
	}
	return s.cases[i].o.Key()
}

// sortIn adds case i to the poll order and, unless its channel or event
// is locked already for another case, to the lock order.
func (s *Select) sortIn(i int) {
	s.perm = append(s.perm, i)
	s.pend = slices.Grow(s.pend[:0], len(s.perm))
	for _, j := range s.lock {
		if s.key(j) == s.key(i) {
			return
		}
	}
	s.lock = append(s.lock, i)
	slices.SortFunc(s.lock, func(a, b int) int {
		pa, pb := s.key(a), s.key(b)
		switch {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
}

// AddOther adds a case that is not a channel's and returns its index.
func (s *Select) AddOther(o Other) int {
	i := len(s.cases)
	_, deferred := o.(Deferred)
	s.cases = append(s.cases, selCase{o: o, deferred: deferred})
	for j := range s.cases {
		s.cases[j].cw = caseWaiter{s, j}
	}
	s.sortIn(i)
	return i
}

// IsOther reports whether case i is an Other case, and returns it.
func (s *Select) IsOther(i int) (Other, bool) { return s.cases[i].o, s.cases[i].o != nil }

// Recv adds a receive case on c and returns its index. Cases are added
// only while no wait is parked (the owner's thread of control).
func (s *Select) Recv(c *Chan) int { return s.add(c, false) }

// Send adds a send case on c and returns its index; SetMsg gives it its
// message.
func (s *Select) Send(c *Chan) int { return s.add(c, true) }

// SetMsg replaces send case i's message with m (nil: none); the old one's
// charge is given back. Only while no wait is parked.
func (s *Select) SetMsg(i int, m *Msg) error {
	if i < 0 || i >= len(s.cases) || !s.cases[i].send {
		return fmt.Errorf("chans: select: case %d is not a send case", i)
	}
	c := s.cases[i].c
	c.mu.Lock()
	old := s.cases[i].m
	s.cases[i].m = m
	c.mu.Unlock()
	if old != nil {
		old.Release()
		s.forget(old)
	}
	if m != nil {
		*s.unsent = append(*s.unsent, m)
	}
	return nil
}

// Msg returns send case i's message (nil: none).
func (s *Select) Msg(i int) *Msg { return s.cases[i].m }

// forget drops m from the list the cleanup gives back.
func (s *Select) forget(m *Msg) {
	u := *s.unsent
	if k := slices.Index(u, m); k >= 0 {
		u[k] = u[len(u)-1]
		u[len(u)-1] = nil
		*s.unsent = u[:len(u)-1]
	}
}

// Sent records that send case i's message was sent: the channel (or a
// receiver) owns it now.
func (s *Select) Sent(i int) {
	c := s.cases[i].c
	c.mu.Lock()
	m := s.cases[i].m
	s.cases[i].m = nil
	c.mu.Unlock()
	if m != nil {
		s.forget(m)
	}
}

// Release gives back the charges of the send cases' messages; the
// Select's owner calls it when it will not wait again (a cleanup does it
// otherwise).
func (s *Select) Release() {
	for i := range s.cases {
		if s.cases[i].send {
			c := s.cases[i].c
			c.mu.Lock()
			m := s.cases[i].m
			s.cases[i].m = nil
			c.mu.Unlock()
			if m != nil {
				m.Release()
			}
		}
	}
	*s.unsent = (*s.unsent)[:0]
}

func (s *Select) lockAll() {
	for _, i := range s.lock {
		if sc := &s.cases[i]; sc.c != nil {
			sc.c.mu.Lock()
		} else {
			sc.o.Lock()
		}
	}
}

func (s *Select) unlockAll() {
	for k := len(s.lock) - 1; k >= 0; k-- {
		if sc := &s.cases[s.lock[k]]; sc.c != nil {
			sc.c.mu.Unlock()
		} else {
			sc.o.Unlock()
		}
	}
}

// Sync waits until no party is inside an operation of any case's channel
// (a wake that lost, withdrawing what it stored, has finished): Chan.Sync
// over the set.
func (s *Select) Sync() {
	s.lockAll() // an empty critical section: a barrier
	s.unlockAll()
}

// Wait performs one ready case, chosen at random among the ready ones,
// and returns it. When none is ready and w is non-nil it arms w, parks
// every case and returns Fired{Case: -1}: w.WakeCase ends the wait with
// the case that fires (a receive case's Result carries its message, whose
// SelCase is the case). With w nil (a poll) it returns Fired{Case: -1}
// with nothing parked. A send case whose message was sent sleeps until
// the next SetMsg. by
// is passed on to the parties a case wakes (Result.By).
func (s *Select) Wait(w SelWaiter, by any) (Fired, error) {
	if len(s.cases) == 0 {
		return Fired{Case: -1}, ErrNoCases
	}
	p := s.perm
	for k := len(p) - 1; k > 0; k-- {
		j := rand.IntN(k + 1)
		p[k], p[j] = p[j], p[k]
	}
	s.lockAll()
	defer s.unlockAll()
	pend := s.pend[:0]
	for _, i := range p {
		if s.cases[i].deferred {
			pend = append(pend, i)
			continue
		}
		if len(pend) > 0 {
			// Deferred cases come first in the order: they are polled
			// only if this case may be ready (a look under the locks
			// decides: what it sees cannot change before the wait ends).
			if !s.mayBeReady(i) {
				continue
			}
			if j, ok := s.pollDeferred(pend); ok {
				return Fired{Case: j}, nil
			}
			pend = pend[:0]
		}
		if f, ok := s.poll(i, by); ok {
			return f, nil
		}
	}
	if w == nil {
		if j, ok := s.pollDeferred(pend); ok {
			return Fired{Case: j}, nil
		}
		return Fired{Case: -1}, nil
	}
	s.w = w
	w.Arm()
	for i := range s.cases {
		sc := &s.cases[i]
		if sc.o != nil {
			sc.o.ParkLocked(i)
			continue
		}
		st := sc.c.st
		if sc.send && sc.m == nil {
			continue // spent: it sleeps until SetMsg
		}
		if sc.send {
			st.sendq.push(sender{&sc.cw, nil}, senderLive, st.dropSender)
		} else {
			st.recvq.push(&sc.cw, Waiter.Live, nil)
		}
	}
	return Fired{Case: -1}, nil
}

// pollDeferred polls the deferred cases pend in order and returns the
// first that is ready.
func (s *Select) pollDeferred(pend []int) (int, bool) {
	for _, j := range pend {
		if s.cases[j].o.PollLocked() {
			return j, true
		}
	}
	return -1, false
}

// mayBeReady reports whether case i may be ready (every case's mutex
// held): false means poll would not perform it. A parked party that
// counts as live may still lose its wake (a timer, a cancel), so true
// means only that poll must try.
func (s *Select) mayBeReady(i int) bool {
	sc := &s.cases[i]
	if sc.o != nil {
		return true
	}
	st := sc.c.st
	if sc.send {
		if sc.m == nil {
			return false
		}
		return st.closed || int64(st.buf.len()) < sc.c.cap || st.recvq.anyLive(Waiter.Live)
	}
	return st.buf.len() > 0 || st.closed || st.sendq.anyLive(senderLive)
}

// poll performs case i if it is ready (every case's mutex held).
func (s *Select) poll(i int, by any) (Fired, bool) {
	sc := &s.cases[i]
	if sc.o != nil {
		if sc.o.PollLocked() {
			return Fired{Case: i}, true
		}
		return Fired{}, false
	}
	c, st := sc.c, sc.c.st
	if sc.send {
		if sc.m == nil {
			return Fired{}, false // spent: it sleeps until SetMsg
		}
		if st.closed {
			return Fired{Case: i, Closed: true}, true
		}
		m := sc.m
		if c.handToReceiver(m, by) {
			return Fired{Case: i}, true
		}
		if int64(st.buf.len()) < c.cap {
			st.hold(m)
			m.sent = true
			st.buf.push(m)
			return Fired{Case: i}, true
		}
		return Fired{}, false
	}
	if m, ok := st.buf.pop(); ok {
		st.unhold(m)
		if sd, ok := c.takeSender(by); ok {
			st.hold(sd.m)
			st.buf.push(sd.m)
		}
		return Fired{Case: i, Msg: m}, true
	}
	if sd, ok := c.takeSender(by); ok {
		st.unhold(sd.m)
		return Fired{Case: i, Msg: sd.m}, true
	}
	if st.closed {
		return Fired{Case: i, Closed: true}, true
	}
	return Fired{}, false
}

// SelCase returns the select case a message was handed to (see
// Select.Wait).
func (m *Msg) SelCase() int { return int(m.selCase) }
