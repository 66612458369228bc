package sched

import (
	"unsafe"

	"github.com/jadevm/jade/vmloop"
)

// SetTraceHook installs a transition observer for tests.
func SetTraceHook(f func(id uint64, from, to State)) { traceHook = f }

// NewTestTask makes a bare task record for state-machine tests.
func NewTestTask(st State) *Task {
	t := &Task{id: 1}
	t.flags.Or(flagPinned) // never put in the real taskPool
	t.state.Store(uint32(st))
	return t
}

// Transition exposes transition for tests.
func (t *Task) Transition(from, to State) { t.transition(from, to) }

// TaskRecordsMade returns how many task records Prepare has allocated
// (the rest came from taskPool).
func TaskRecordsMade() uint64 { return tasksMade.Load() }

// TaskRecordsPooled returns how many recycled task records went to
// taskPool (the caches and the spares were full, or no worker took them).
func TaskRecordsPooled() uint64 { return tasksPooled.Load() }

// SpareRecords returns how many recycled task records s's spares hold.
func (s *Scheduler) SpareRecords() int { return int(s.spares.n.Load()) }

// Draining reports whether completions currently look for the last task
// (a Drain waits).
func (s *Scheduler) Draining() bool { return s.draining.Load() }

// ParkYields returns how many of worker i's hand-overs to Go's scheduler
// were made on its way into a park.
func (s *Scheduler) ParkYields(i int) uint64 { return s.workers[i].parkYields.load() }

// EventWaiters returns how many tokens ev's waiter list holds (live or
// stale).
func EventWaiters(ev *Event) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.waiters.len()
}

// Joiners returns how many tokens t's joiner list holds beyond the first
// slot (live or stale).
func Joiners(t *Task) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rare.Load(); r != nil {
		return r.joiners.len()
	}
	return 0
}

// ExecOf returns t's execution state (for tests outside the package; the
// bus gets it through Control.Exec).
func ExecOf(t *Task) *vmloop.Exec { return t.ex() }

// TaskParts is the Go memory of the registered tasks, part by part: each
// allocation rounded up to its size class, summed over the tasks.
type TaskParts struct {
	Tasks                         int
	Record, Regs, Frames, Handles int
	// Refs is the slots of the shared reference table the tasks' heaps
	// hold or keep spare (an event argument's, a child's reference):
	// vmloop.RefSlotBytes each, the table's memory for them.
	Refs int
}

// Sum is the bytes of all the parts.
func (p TaskParts) Sum() int { return p.Record + p.Regs + p.Frames + p.Handles + p.Refs }

// TaskParts walks the registry (the world need not stop: call it while the
// tasks are parked).
func (s *Scheduler) TaskParts() TaskParts {
	var p TaskParts
	s.registry.each(func(t *Task) {
		f := t.ex().Footprint()
		p.Tasks++
		p.Record += SizeClass(int(unsafe.Sizeof(Task{}))) // the Exec inside
		p.Regs += SizeClass(f.Regs)
		p.Frames += SizeClass(f.Frames)
		p.Handles += SizeClass(f.Handles)
		p.Refs += t.ex().RefSlots() * vmloop.RefSlotBytes
	})
	return p
}

// sizeClasses are Go's small allocation size classes up to 1 KiB
// (runtime/sizeclasses.go).
var sizeClasses = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024}

// SizeClass is what Go allocates for an object of n bytes (n ≤ 1 KiB:
// its size class; larger: n rounded up to 8 bytes, near enough here).
func SizeClass(n int) int {
	if n == 0 {
		return 0
	}
	for _, c := range sizeClasses {
		if n <= c {
			return c
		}
	}
	return (n + 7) &^ 7
}

// RegistryHome is what one registry list holds: the tasks linked in it
// (Dead of them ended elsewhere and not unlinked yet), and its counts.
type RegistryHome struct {
	Linked, Dead int
	Adds, Ends   uint64
}

// RegistryHomes looks at every registry list (the workers', then the
// host's), each with its owner's bias revoked.
func (s *Scheduler) RegistryHomes() []RegistryHome {
	out := make([]RegistryHome, len(s.registry.homes))
	for i := range s.registry.homes {
		h := &s.registry.homes[i]
		h.take()
		for t := h.head; t != nil; t = t.rnext {
			out[i].Linked++
		}
		for t := h.dead.Load(); t != nil; t = t.qnext() {
			out[i].Dead++
		}
		out[i].Adds, out[i].Ends = h.adds.Load(), h.ends.Load()
		h.give()
	}
	return out
}
