//go:build linux

package uring

// Ring: the io_uring implementation of evpoll.Backend.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// Ring is an evpoll.Backend on one io_uring instance. See the package doc
// for the ring layout, the memory ordering and the owner-thread mode.
type Ring struct {
	mu      sync.Mutex // guards everything below up to ctr, except as noted
	r       *ring
	slots   *slotTable
	ready   []evpoll.Completion // completions reaped outside Wait (SQ-full path)
	closed  bool
	lastErr error // a deferred submission error, reported by the next Wait
	// wokePending: a wake CQE was reaped into b.ready's path, not by Wait.
	wokePending bool

	owner    bool // OwnerThread: only the owner thread enters the kernel
	ownerTid int  // that thread's id (gettid at Open)
	// remoteCancels are Cancel calls from other threads in owner mode that
	// found the SQ full; the owner turns them into SQEs at its next Wait.
	remoteCancels []evpoll.OpID
	waiters       atomic.Int32 // goroutines blocked in io_uring_enter; read without mu
	pending       atomic.Int64 // Pending()

	// Wake state. woken coalesces Wake calls until a Wait observes one.
	woken   atomic.Bool
	wakeMu  sync.Mutex // guards the waker and wakeOff against Close
	wakeOff bool
	wk      waker
	wakeBuf [8]byte // eventfd READ target: referenced by the armed SQE

	reason string
	ctr    evpoll.Counters
}

var _ evpoll.Backend = (*Ring)(nil)

// waitArg holds the EXT_ARG argument and its timespec in one heap object,
// so the pointer inside arg stays valid for the whole enter call.
type waitArg struct {
	arg getEventsArg
	ts  kernelTimespec
}

var waitArgPool = sync.Pool{New: func() any { return new(waitArg) }}

// ladders of setup flags, best first (notes §1.8, §6.1).
var (
	ownerLadder = []uint32{
		setupSingleIssuer | setupDeferTaskrun | setupCoopTaskrun | setupTaskrunFlag | setupSubmitAll,
		setupSingleIssuer | setupCoopTaskrun | setupTaskrunFlag | setupSubmitAll,
		setupCoopTaskrun | setupTaskrunFlag | setupSubmitAll,
		setupSubmitAll,
		0,
	}
	// COOP_TASKRUN is left out of the shared ladder: completions run as
	// task work on the submitting thread, and without an IPI a Go thread
	// parked in a futex would sit on them while another thread waits.
	sharedLadder = []uint32{setupSubmitAll, 0}
)

// OpenRing sets up an io_uring backend. Errors from io_uring_setup wrap the
// errno (errors.Is(err, unix.EPERM) etc.); a kernel without EXT_ARG
// (5.11) or without a needed opcode yields an error wrapping
// errors.ErrUnsupported.
func OpenRing(o Options) (*Ring, error) {
	entries := o.Entries
	if entries == 0 {
		entries = defaultEntries
	}
	ladder := sharedLadder
	if o.OwnerThread {
		ladder = ownerLadder
	}
	r, err := newRing(entries, o.CQEntries, ladder)
	if err != nil {
		return nil, err
	}
	if r.features&featExtArg == 0 || r.features&featNoDrop == 0 {
		r.close()
		return nil, fmt.Errorf("uring: setup: kernel lacks EXT_ARG/NODROP (features %#x): %w", r.features, errors.ErrUnsupported)
	}
	for _, op := range []uint8{opNop, opPollAdd, opAccept, opConnect, opRecv, opSend, opRead, opWrite, opOpenat, opClose, opAsyncCancel} {
		if !r.supported[op] {
			r.close()
			return nil, fmt.Errorf("uring: probe: opcode %d unsupported: %w", op, errors.ErrUnsupported)
		}
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	b := &Ring{r: r, slots: newSlotTable(min(n, maxSlots)), owner: o.OwnerThread}
	if o.OwnerThread {
		b.ownerTid = unix.Gettid()
	}
	mode := o.Wake
	if mode == "" {
		mode = defaultWake
	}
	if mode == "msgring" && !r.supported[opMsgRing] {
		mode = "eventfd"
	}
	b.mu.Lock()
	b.wk, err = b.newWaker(mode)
	b.mu.Unlock()
	if err != nil {
		r.close()
		return nil, err
	}
	b.reason = fmt.Sprintf("io_uring sq=%d cq=%d flags=%s features=%#x wake=%s",
		r.sqEntries, r.cqEntries, setupFlagString(r.flags&setupFlagsReported), r.features, mode)
	return b, nil
}

// Name implements evpoll.Backend.
func (b *Ring) Name() string { return "io_uring" }

// Reason describes the ring: sizes, the setup flags that took, the
// feature mask and the wake mechanism.
func (b *Ring) Reason() string { return b.reason }

// SetupFlags returns the io_uring_setup flags the kernel accepted.
func (b *Ring) SetupFlags() uint32 { return b.r.flags }

// Pending implements evpoll.Backend.
func (b *Ring) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Ring) Stats() evpoll.Stats { return b.ctr.Snapshot() }

// Close implements evpoll.Backend: it cancels every pending op, reaps
// until the kernel has returned all of them (bounded by closeGrace), then
// unmaps and closes. Ops still held by the kernel after closeGrace keep
// their memory referenced forever (see graveyard) rather than risk the
// kernel writing into freed memory.
func (b *Ring) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true // Wait returns ErrClosed; a wake CQE no longer re-arms
	b.wakeMu.Lock()
	if b.waiters.Load() > 0 {
		_ = b.wk.wake() // goroutines blocked in Wait come back
	}
	b.wakeOff = true
	b.wakeMu.Unlock()
	// No thread may be inside (or about to enter) io_uring_enter on the fd
	// when it is closed: its number could be reused by another ring.
	waitFor(&b.mu, func() bool { return b.waiters.Load() == 0 })
	b.remoteCancels = nil
	for i := range int32(b.slots.Len()) {
		if b.slots.At(i).state == slotActive {
			// A second ASYNC_CANCEL for an op already being cancelled just
			// gets -ENOENT or -EALREADY.
			_ = b.cancelLocked(uint64(b.slots.ID(i)))
		}
	}
	b.wk.cancelLocked(b)
	deadline := time.Now().Add(closeGrace)
	var buf [64]evpoll.Completion
	for {
		for n := len(buf); n == len(buf); {
			n, _ = b.reapCQLocked(buf[:]) // discarded: nobody will Wait again
		}
		if b.slots.Active() == 0 && !b.wk.busy() || time.Now().After(deadline) {
			break
		}
		if err := b.waitEnter(b.r.unsubmitted(), 10*time.Millisecond); err != nil {
			break // e.g. EEXIST: Close from a non-owner thread
		}
	}
	if b.slots.Active() > 0 || b.wk.busy() {
		graveyard.add(b.slots, b)
	}
	b.ready = nil
	b.pending.Store(0)
	err := b.wk.close()
	if e := b.r.close(); err == nil && e != nil {
		err = fmt.Errorf("uring: close: %w", e)
	}
	return err
}

const closeGrace = 2 * time.Second

// waitFor releases mu until cond holds (checked under mu) or a second
// passes. Close uses it to let blocked waiters leave.
func waitFor(mu *sync.Mutex, cond func() bool) {
	for deadline := time.Now().Add(time.Second); !cond() && time.Now().Before(deadline); {
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
	}
}

// graveyard keeps the memory of ops the kernel would not give back at
// Close reachable for the life of the process.
var graveyard graveyardT

type graveyardT struct {
	mu   sync.Mutex
	keep []any
}

func (g *graveyardT) add(v ...any) {
	g.mu.Lock()
	g.keep = append(g.keep, v...)
	g.mu.Unlock()
}
