// Package chans implements channels: bounded queues of values of one
// element type that carry data between running tasks, and between tasks
// and the host. It lies above the scheduler (spec §2.3, §5.1, S-17): the
// scheduler knows nothing of channels, and a channel knows nothing of the
// scheduler. A blocked party is a Waiter, whose one operation — end my
// wait with this result, unless my wait already ended otherwise — the bus
// builds on the scheduler's generic wait/wake by identity (a task's wait
// token and its host-result slot) or on a Go channel for a host
// goroutine.
//
// # Exactly once
//
// Every transfer of a message between two parties happens under the
// channel's mutex and is decided by one Wake: a sender that finds a
// parked receiver hands the message over only if Wake(receiver) wins, and
// a receiver that finds a parked sender takes its message only if
// Wake(sender) wins. A waiter whose wait ended otherwise (a timeout, a
// cancel) makes Wake lose: nothing passed, and the party goes on to the
// next waiter or the buffer. Wake and the end of a wait by a timer or a
// cancel are one compare-and-swap on the task's wait word, so exactly one
// of them wins: a timed-out send enqueued nothing, a timed-out recv took
// nothing, and a send that returned was taken by exactly one receiver
// (or sits in the buffer). A receiver cancelled after a hand-over won its
// wake (before it resumed) gives the message back to the head of the
// queue (Requeue), so a cancel never loses a message.
//
// # Select
//
// A Select (select.go) waits on several channel operations — and, through
// Other, on cases that are not channels' (the bus: event waits) — at
// once and performs exactly one, with the same wake protocol: all its
// entries share one wait, so the first wake that wins decides.
//
// # Memory
//
// A message held by a channel — buffered, carried by a parked sender, or
// handed to a parked receiver that has not resumed — is a Value copied
// out of its sender's heap. Its host bytes (NewMsg's charge) are charged
// to the memory budget of the sender's engine from the send until a
// receiver takes it into its own heap (Msg.Release), because the sender chose both
// its size and how many it sends. A send that does not fit is refused
// (the bus throws ResourceError). Messages still held when the channel
// becomes unreachable are given back by a cleanup, so every byte charged
// is given back exactly once.
package chans

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/jadevm/jade/vmloop"
)

// Elem is a channel's element type.
type Elem uint8

// Element types.
const (
	ElemI64 Elem = iota
	ElemF64
	ElemRef
)

func (e Elem) String() string {
	switch e {
	case ElemI64:
		return "i64"
	case ElemF64:
		return "f64"
	}
	return "ref"
}

// Kind is the value kind of the elements (KindVoid for ref: any
// reference kind), as vmloop.Array takes it.
func (e Elem) Kind() vmloop.Kind {
	switch e {
	case ElemI64:
		return vmloop.KindI64
	case ElemF64:
		return vmloop.KindF64
	}
	return vmloop.KindVoid
}

// Accepts reports whether a value of kind k may be sent on a channel of
// element type e.
func (e Elem) Accepts(k vmloop.Kind) bool {
	switch e {
	case ElemI64:
		return k == vmloop.KindI64
	case ElemF64:
		return k == vmloop.KindF64
	}
	return k.Type() == vmloop.TRef
}

// ErrClosed is wrapped by the errors of a send on, or a receive from the
// drained end of, a closed channel, and of a second close.
var ErrClosed = errors.New("channel closed")

// ErrNegativeCap is wrapped by New's error for a capacity below zero.
var ErrNegativeCap = errors.New("negative channel capacity")

// Result is what ends a waiter's wait: for a receiver, Msg (the message,
// whose ownership passes) or Closed; for a sender, Closed or not (sent).
type Result struct {
	Msg    *Msg
	Chan   *Chan // with Msg: the channel to Requeue it to if it is not taken
	Closed bool
	// By is the party whose operation wakes the waiter, as its caller
	// passed it (the bus: the running task, so that the woken one is
	// queued on the same worker), or nil.
	By any
}

// Waiter is one blocked party. Wake ends its wait with r and reports
// true, or reports false (and takes nothing) when the wait already ended
// otherwise. It is called with the channel's mutex held and must not
// call back into the channel. Live reports whether the wait has not
// ended (a stale waiter is dropped at the next compaction).
type Waiter interface {
	Wake(r Result) bool
	Live() bool
}

// sender is a parked sender: a task or host waiter with its message, or
// a select's send case (m nil: the message is the case's, taken only by
// the party that wins the case's wake).
type sender struct {
	w Waiter
	m *Msg
}

// msg returns the message the sender offers (mutex held: a select
// changes its case's message only under it).
func (s sender) msg() *Msg {
	if s.m == nil {
		return s.w.(*caseWaiter).msg()
	}
	return s.m
}

// senderLive reports whether s still offers a message (mutex held). A
// select's entry is its case's for every wait of the select, so an entry
// left behind by a wait that another case won is live again in the next
// wait; once its case's message was sent (by that wait, or by another
// entry of the same case) the case is spent and the entry offers nothing,
// even while the select waits.
func senderLive(s sender) bool { return s.w.Live() && s.msg() != nil }

// dropSender gives back the charge of a stale sender's message (a
// select's case keeps its own). Mutex held.
func (st *state) dropSender(s sender) {
	if s.m != nil {
		st.unhold(s.m)
		s.m.Release()
	}
}

// state is what a cleanup needs to give back the charges of a channel
// that became unreachable: it holds no pointer to the Chan.
type state struct {
	buf    ring         // buffered messages, oldest first; guarded by Chan.mu
	sendq  fifo[sender] // parked senders with their messages; guarded by mu
	recvq  fifo[Waiter] // parked receivers; guarded by mu
	closed bool         // guarded by mu
	// held is the bytes charged for the messages this channel holds now
	// (buffered and carried by parked senders); read without the mutex.
	held atomic.Int64
}

// Chan is a channel. Its zero value is not usable: call New.
type Chan struct {
	elem Elem
	cap  int64
	// owner is the runtime whose tasks use the channel (SetOwner, before
	// the channel is published; nil: none named), never written after.
	owner any
	mu    sync.Mutex
	st    *state
}

// SetOwner names the runtime whose tasks use c (an opaque token compared
// by Owner's callers); call it before c is visible to anyone else.
func (c *Chan) SetOwner(o any) { c.owner = o }

// Owner returns what SetOwner named, or nil.
func (c *Chan) Owner() any { return c.owner }

// New returns a channel of element type elem and capacity cap (0: every
// send waits for a receiver, a rendezvous).
func New(elem Elem, capacity int64) (*Chan, error) {
	if capacity < 0 {
		return nil, fmt.Errorf("chans: new: capacity %d: %w", capacity, ErrNegativeCap)
	}
	if elem > ElemRef {
		return nil, fmt.Errorf("chans: new: element type %d unknown", elem)
	}
	c := &Chan{elem: elem, cap: capacity, st: &state{}}
	runtime.AddCleanup(c, func(st *state) { st.drop() }, c.st)
	return c, nil
}

// drop gives back the charges of every message st still holds; it runs
// once nothing can reach the channel.
func (st *state) drop() {
	for {
		m, ok := st.buf.pop()
		if !ok {
			break
		}
		m.Release()
	}
	for {
		s, ok := st.sendq.pop()
		if !ok {
			break
		}
		if s.m != nil {
			s.m.Release()
		}
	}
}

// Elem returns the channel's element type.
func (c *Chan) Elem() Elem { return c.elem }

// Cap returns the channel's capacity.
func (c *Chan) Cap() int64 { return c.cap }

// Len returns the number of buffered messages.
func (c *Chan) Len() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(c.st.buf.len())
}

// HeldBytes returns the bytes charged for the messages the channel holds
// now (buffered, or carried by parked senders not yet taken).
func (c *Chan) HeldBytes() int64 { return c.st.held.Load() }

// Sync waits until no other party is inside an operation of the channel
// (a wake that lost, withdrawing what it stored, has finished).
func (c *Chan) Sync() {
	c.mu.Lock()
	//lint:ignore SA2001 an empty critical section is the point: a barrier
	c.mu.Unlock()
}

// Forget drops the parked senders whose waits ended otherwise (a timeout,
// a cancel) and gives their messages' charges back at once, rather than
// when a receiver or a compaction next meets them. The bus calls it when
// a send times out; being under the mutex, it also waits out a wake that
// lost the race with the timer (Sync).
func (c *Chan) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	st.sendq.compact(senderLive, st.dropSender)
}

// Closed reports whether the channel was closed.
func (c *Chan) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.closed
}

func (c *Chan) String() string { return fmt.Sprintf("chan<%s>(cap %d)", c.elem, c.cap) }

// hold makes st count m.
func (st *state) hold(m *Msg) {
	if m.ch == nil {
		m.ch = st
		st.held.Add(m.cost)
	}
}

// unhold stops st counting m: it passed to a receiver, whose Release no
// longer changes the channel's count.
func (st *state) unhold(m *Msg) {
	if m.ch == st {
		st.held.Add(-m.cost)
		m.ch = nil
	}
}
