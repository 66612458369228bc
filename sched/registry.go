package sched

import (
	"sync/atomic"
	"unsafe"

	"github.com/jadevm/jade/internal/asymfence"
	"github.com/jadevm/jade/internal/relstore"
	"github.com/jadevm/jade/internal/tinylock"
)

// The registry of live tasks: a list per worker of the tasks it spawned
// (their home, Task.rhome), and one for the host's spawns, so that a
// spawn and the end of a task on the worker that spawned it touch only
// that worker's list, with no locked instruction (BenchmarkChainedSpawn,
// BenchmarkSpawnMany).
//
// A worker's list is owner-biased (bias.go), as its live-task bank is: a
// walker (each: the task dump, cancel-all) takes the list's lock and
// revokes the bias; the worker, finding it revoked, works under the lock
// until the walker is done.
//
// A task that ends on another worker (a stolen child), or off the
// workers, does not touch its home's list: it is pushed onto the home's
// dead stack (one compare-and-swap), and the home unlinks it at its next
// pick (reapDead), where the record's last live reference is dropped
// (endTail). A worker about to park marks its list away, under its lock,
// and reaps; while it is away, whoever pushes reaps under the lock
// itself, so an ended task waits for the unlink only while its home is
// awake and between picks (a slice at most). The host's list is always
// away.
//
// The count needs no list: each home counts the tasks added to it, and
// each worker the tasks that ended on it. count reads every end count
// first, then every add count: a task's add happens before its end, so a
// count never misses a task whose end it did not see, and never reads 0
// while a chain of tasks is live (each link is added before the link
// that spawned it ends).

// registry tracks live tasks (above).
type registry struct {
	// homes are the lists: index w.id for worker w, the last the host's
	// (hostHome). Made by New; a Scheduler made otherwise (tests) has
	// none until first used, and then only the host's.
	homes []regHome
}

// regHome is one list of live tasks and its counts.
type regHome struct {
	// bias is revoked while a walker holds mu and may read or change the
	// list: the owner then works under mu (revoke, enter, locked).
	bias
	// away is set while the owner is parked or gone (and always for the
	// host's list): others may then change the list under mu. Set and
	// cleared by the owner, under mu.
	away atomic.Bool
	mu   tinylock.Mutex
	// head is the first task of the list (linked by Task.rprev, rnext):
	// changed by the owner in its section, or by anyone under mu while
	// revoked or away.
	head *Task
	// adds counts the tasks added to this list; written by the owner (a
	// release store), or under mu for the host's list.
	adds atomic.Uint64
	// ends counts the tasks that ended on this list's worker; written by
	// that worker (a release store), or by Add for the host's list (tasks
	// ended off the workers).
	ends atomic.Uint64
	_    [cacheLinePad - 40]byte
	// dead is the stack of this list's tasks that ended elsewhere, linked
	// by Task.link (free once a task has left its worker), still in the
	// list and holding their live reference: pushed by compare-and-swap,
	// taken whole by the owner (reapDead) or, while away, by a pusher.
	dead atomic.Pointer[Task]
	_    [cacheLinePad - 8]byte
}

// init makes the registry's lists for n workers and the host's.
func (r *registry) init(n int) {
	r.homes = make([]regHome, n+1)
	r.homes[n].away.Store(true)
}

// host returns the host's list.
func (r *registry) host() *regHome {
	if r.homes == nil {
		r.init(0)
	}
	return &r.homes[len(r.homes)-1]
}

// locked is the owner's way in when enter found the bias revoked: out of
// the section, into mu. exit(false) ends it.
//
//go:noinline
func (h *regHome) locked() {
	h.leave()
	h.mu.Lock()
}

// exit ends the owner's work on h that enter began: its section when
// enter returned fast, else mu (locked).
func (h *regHome) exit(fast bool) {
	if fast {
		h.leave()
	} else {
		h.mu.Unlock()
	}
}

// link puts t at the head of h (the owner's section, or mu).
func (h *regHome) link(t *Task) {
	t.rnext = h.head
	if h.head != nil {
		h.head.rprev = t
	}
	h.head = t
}

// unlink takes t out of h (the owner's section, or mu).
func (h *regHome) unlink(t *Task) {
	if t.rprev != nil {
		t.rprev.rnext = t.rnext
	} else {
		h.head = t.rnext
	}
	if t.rnext != nil {
		t.rnext.rprev = t.rprev
	}
	t.rprev, t.rnext = nil, nil
}

// add registers t, spawned on w (nil: the host), before t is visible.
func (r *registry) add(w *worker, t *Task) {
	if w != nil && w.home != nil {
		h := w.home
		t.rhome = uint16(w.id)
		fast := h.enter()
		if !fast {
			h.locked()
		}
		h.link(t)
		h.exit(fast)
		relstore.Uint64(&h.adds, h.adds.Load()+1)
		return
	}
	r.addHost(t)
}

// addHost is add for the host (or a worker with no list of its own).
func (r *registry) addHost(t *Task) {
	h := r.host()
	t.rhome = uint16(len(r.homes) - 1)
	h.mu.Lock()
	h.link(t)
	h.adds.Add(1)
	h.mu.Unlock()
}

// remove deregisters t, which ended on w (nil: off the workers): from its
// own list, when w spawned it, and then it returns nil; otherwise it
// counts the end and returns t's home, where the caller pushes t
// (pushDead) once it is done with the record.
func (r *registry) remove(w *worker, t *Task) *regHome {
	if w != nil && w.home != nil && int(t.rhome) == w.id {
		h := w.home
		fast := h.enter()
		if !fast {
			h.locked()
		}
		h.unlink(t)
		h.exit(fast)
		asymfence.StoreUint64(&h.ends, h.ends.Load()+1) // then draining: Drain
		return nil
	}
	return r.removeElsewhere(w, t)
}

// removeElsewhere is remove for a task that ended away from its home.
func (r *registry) removeElsewhere(w *worker, t *Task) *regHome {
	h := &r.homes[t.rhome]
	if w != nil && w.home != nil {
		own := w.home
		asymfence.StoreUint64(&own.ends, own.ends.Load()+1)
	} else {
		r.host().ends.Add(1)
	}
	return h
}

// pushDead puts t, which remove counted and which stays in its home h's
// list, onto h's dead stack, for h's owner to unlink and to run its tail
// (endTail). A worker w gathers such tasks by home and pushes
// goneBatch of them at once (and the rest before it parks: flushGone),
// so that a fan-out's stolen children cost their spawner's worker one
// contended line per batch, not per task; off the workers (w nil), t is
// pushed alone. t may be reused as soon as it is pushed: the caller must
// not touch it after.
func (r *registry) pushDead(w *worker, h *regHome, t *Task) {
	if w == nil || w.gone == nil {
		h.push(nil, t, t)
		return
	}
	g := &w.gone[t.rhome]
	t.link = unsafe.Pointer(g.head)
	if g.head == nil {
		g.tail = t
	}
	g.head = t
	if g.n++; g.n >= goneBatch {
		w.flushGoneTo(int(t.rhome))
	}
}

// goneBatch is how many tasks that ended away from their home a worker
// gathers before it pushes them onto the home's dead stack.
const goneBatch = 32

// goneChain is the tasks of one home that ended on a worker and wait
// there to be pushed (linked by Task.link, newest first).
type goneChain struct {
	head, tail *Task
	n          int
}

// flushGoneTo pushes w's gathered tasks of home i onto its dead stack.
func (w *worker) flushGoneTo(i int) {
	g := &w.gone[i]
	if g.head == nil {
		return
	}
	head, tail := g.head, g.tail
	*g = goneChain{}
	w.s.registry.homes[i].push(w, head, tail)
}

// flushGone pushes every task w has gathered (before it parks or stops).
func (w *worker) flushGone() {
	for i := range w.gone {
		w.flushGoneTo(i)
	}
}

// push puts the chain head..tail (linked by Task.link) onto h's dead
// stack; when h is away, the caller (on w, nil: off the workers) unlinks
// and ends every task on the stack itself.
func (h *regHome) push(w *worker, head, tail *Task) {
	for {
		top := h.dead.Load()
		tail.link = unsafe.Pointer(top)
		if h.dead.CompareAndSwap(top, head) {
			break
		}
	}
	// The push, then the look (both sequentially consistent): a home
	// that marks itself away and then takes its dead stack sees this
	// push, or this look sees it away.
	if h.away.Load() {
		h.mu.Lock()
		var d *Task
		if h.away.Load() {
			d = h.takeDeadLocked()
		}
		h.mu.Unlock()
		endTails(w, d)
	}
}

// takeDeadLocked unlinks every task on h's dead stack and returns them,
// still linked by Task.link, for endTails (mu held while away, or
// revoked, or the owner's section).
func (h *regHome) takeDeadLocked() *Task {
	d := h.dead.Swap(nil)
	for t := d; t != nil; t = t.qnext() {
		h.unlink(t)
	}
	return d
}

// endTails runs the tail of each task of d (a dead stack taken whole), on
// w (nil: off the workers).
func endTails(w *worker, d *Task) {
	for d != nil {
		t := d
		d = t.qnext()
		t.link = nil
		t.endTail(w)
	}
}

// endTail is the end of t's completion once t has left the registry: its
// record is charged while handles still name it, and its live reference
// is dropped (the last touch: without handles the record is reused).
func (t *Task) endTail(w *worker) { t.unrefOn(w, t.chargeRecord()) }

// reapDead unlinks the tasks of w's list that ended elsewhere and drops
// their records' live references; called by w between picks, when its
// dead stack is not empty.
func (w *worker) reapDead() {
	h := w.home
	fast := h.enter()
	if !fast {
		h.locked()
	}
	d := h.takeDeadLocked()
	h.exit(fast)
	endTails(w, d)
}

// regAway marks w's list away before w parks (or leaves for good), and
// reaps what ended elsewhere: from now on a pusher reaps under the lock.
func (w *worker) regAway() {
	w.flushGone()
	h := w.home
	if h == nil {
		return
	}
	h.mu.Lock()
	h.away.Swap(true) // a read-modify-write: see asymfence (qemu)
	// The mark, then the look (both sequentially consistent): a pusher
	// that did not see it away pushed before this look.
	var d *Task
	if h.dead.Load() != nil {
		d = h.takeDeadLocked()
	}
	h.mu.Unlock()
	endTails(w, d)
}

// regBack ends w's away: its list is its own again.
func (w *worker) regBack() {
	h := w.home
	if h == nil {
		return
	}
	h.mu.Lock()
	h.away.Store(false)
	h.mu.Unlock()
}

// take takes h's lock and its owner's bias: once it returns, the list is
// the caller's alone until give.
func (h *regHome) take() {
	h.mu.Lock()
	h.revoke()
	asymfence.Heavy()
	h.waitOut()
}

// give gives h back to its owner.
func (h *regHome) give() {
	h.unrevoke()
	h.mu.Unlock()
}

// count returns the number of live tasks: every end count, then every add
// count (see above). Exact when no task starts or ends meanwhile; never
// below the tasks live throughout the call, and never 0 while a task
// that was live when it began has not ended.
func (r *registry) count() int64 {
	if r.homes == nil {
		return 0
	}
	var ends, adds uint64
	for i := range r.homes {
		ends += r.homes[i].ends.Load()
	}
	for i := range r.homes {
		adds += r.homes[i].adds.Load()
	}
	return int64(adds - ends)
}

// each calls f for every live task registered when each reached its list
// (one that ends meanwhile may be among them, Completed; one that had
// ended elsewhere and waits to be unlinked is not), one list at a time:
// it takes the list from its owner, unlinks its dead, and holds a
// reference to each task while f runs on it.
func (r *registry) each(f func(*Task)) {
	var ts []*Task
	for i := range r.homes {
		h := &r.homes[i]
		h.take()
		d := h.takeDeadLocked()
		for t := h.head; t != nil; t = t.rnext {
			if t.State() == Completed {
				continue // ended elsewhere, not unlinked yet
			}
			t.refs.Add(1) // listed, so not yet reusable: keep it so
			ts = append(ts, t)
		}
		h.give()
		endTails(nil, d)
	}
	for _, t := range ts {
		f(t)
		t.unref()
	}
}
