package slots

import (
	"fmt"
	"sync/atomic"

	"github.com/jadevm/jade/internal/evpoll"
)

// Submitter is the part of a [Poller] backend that [Submit] drives; its
// methods are called with the gate's mutex held.
type Submitter[T any] interface {
	Poller
	// Table is the backend's slot table.
	Table() *Table[T]
	// InitLocked readies the entry e of the freshly allocated slot idx
	// for op and tok; an error refuses the op (Submit releases the slot).
	InitLocked(idx int32, e *T, op *evpoll.Op, tok evpoll.Token) error
	// CompleteLocked finishes slot idx with res (a Nop, with 0).
	CompleteLocked(idx int32, res int32)
	// PoolLocked hands an Open to the blocking pool.
	PoolLocked(idx int32, e *T)
	// CloseLocked runs a Close (after cancelling the descriptor's ops).
	CloseLocked(idx int32, e *T)
	// StartLocked starts an I/O op.
	StartLocked(idx int32, e *T)
}

// Submit is evpoll.Backend's Submit for b: it checks op (evpoll.CheckOp),
// takes a slot, counts the op (in pending, the ops not yet returned by
// Wait, and in ctr) and starts it. name prefixes its errors ("epoll:
// submit: ...").
func Submit[T any, B Submitter[T]](b B, name string, pending *atomic.Int64, ctr *evpoll.Counters, op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	if err := evpoll.CheckOp(op); err != nil {
		return 0, fmt.Errorf("%s: submit: %w", name, err)
	}
	g := b.Gate()
	g.Mu.Lock()
	defer g.Mu.Unlock()
	if g.Closed {
		return 0, fmt.Errorf("%s: submit: %w", name, evpoll.ErrClosed)
	}
	t := b.Table()
	idx, e, ok := t.Alloc()
	if !ok {
		return 0, fmt.Errorf("%s: submit: %w", name, evpoll.ErrTooMany)
	}
	if err := b.InitLocked(idx, e, op, tok); err != nil {
		t.Release(idx)
		return 0, fmt.Errorf("%s: submit: %w", name, err)
	}
	id := t.ID(idx)
	pending.Add(1)
	ctr.Submitted.Add(1)
	ctr.Ops[op.Kind].Add(1)
	switch op.Kind {
	case evpoll.Nop:
		b.CompleteLocked(idx, 0)
	case evpoll.Open:
		b.PoolLocked(idx, e)
	case evpoll.Close:
		b.CloseLocked(idx, e)
	default:
		b.StartLocked(idx, e)
	}
	return id, nil
}
