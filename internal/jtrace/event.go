package jtrace

// Kind is what an Event records.
type Kind uint8

// Event kinds. The fields an event uses are listed with each; Time, and
// the track (the ring it was written to), always.
const (
	// KindNone marks an unused slot; it is never written.
	KindNone Kind = iota
	// KindSpawn: Task was made Runnable by its spawn; Arg is the
	// spawning task's id (0: the host). Flow starts the arrow to Task's
	// first dispatch. The last spawn of a slice into its worker's lifo
	// slot is not written as a KindSpawn: it is folded into the slice's
	// KindSliceEnd (Arg, Flow), since the spawned task cannot run before
	// that slice ends.
	KindSpawn
	// KindDispatch: a slice of Task begins at function Fn, pc PC; Arg
	// is the task's name in the Strings table (0: none). Flow, when not
	// 0, ends the arrow of the spawn or wake that made it Runnable.
	KindDispatch
	// KindSliceEnd: the slice of Task ends for Reason at Fn@PC (the
	// location where the slice began when the task completed). Arg, when
	// not 0, is a task the slice spawned (its last spawn, folded in: see
	// KindSpawn), and Flow that task's arrow.
	KindSliceEnd
	// KindWake: Task was woken by task Arg (0: from between tasks or
	// outside the workers: a completion, a timer, the host). Flow starts
	// the arrow to Task's next dispatch.
	KindWake
	// KindSteal: the worker stole Arg tasks from another worker's ring;
	// Task is the first of them.
	KindSteal
	// KindInject: the worker took Arg tasks from the inject queue, Task
	// the first of them.
	KindInject
	// KindPark: the worker blocks (its backend's Wait or its futex).
	KindPark
	// KindUnpark: the worker is running again; Arg completions were
	// reaped in its park.
	KindUnpark
	// KindGoYield: the worker handed its goroutine to Go's scheduler
	// for Arg nanoseconds, ending at Time.
	KindGoYield
	// KindTimer: a timer of Task fired (a sleep, a timeout, a tick).
	KindTimer
	// KindIOSubmit: Task submitted an I/O operation of kind Arg.
	KindIOSubmit
	// KindIOComplete: an I/O operation of Task completed with result Arg
	// (a count, a descriptor or -errno, as a signed value).
	KindIOComplete
	// KindGC: Go's garbage collector finished cycle Task, whose
	// stop-the-world pauses took Arg nanoseconds in all; Time is when
	// the last of them ended.
	KindGC
	// KindLong: the slice (Reason LongSlice), host call (LongCall) or
	// run-queue wait (LongWait) of Task at Fn@PC took Arg nanoseconds,
	// more than its engine's threshold.
	KindLong
	numKinds
)

var kindNames = [numKinds]string{"none", "spawn", "dispatch", "slice end", "wake", "steal", "inject", "park", "unpark",
	"go hand-over", "timer", "io submit", "io complete", "gc", "long"}

// String names the kind as the trace shows it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind?"
}

// Reasons a slice ends (KindSliceEnd's Reason).
const (
	// EndPreempted: the slice used its budget, or was stopped at a safe
	// point (a kick, a stop of the world).
	EndPreempted uint8 = iota + 1
	// EndYield: the task yielded.
	EndYield
	// EndSuspend: the task waits (a join, an event, a timer, I/O, a host
	// call).
	EndSuspend
	// EndComplete: the task returned, threw or trapped.
	EndComplete
	// EndCancel: the task completed Cancelled.
	EndCancel
)

// Reasons of KindLong.
const (
	LongSlice uint8 = iota + 1 // a slice ran longer than the threshold
	LongCall                   // a non-blocking host call did
	LongWait                   // a sampled wait in a run queue did
)

var longNames = [...]string{"?", "slice", "host call", "run-queue wait"}

// LongName names a KindLong reason.
func LongName(r uint8) string {
	if int(r) < len(longNames) {
		return longNames[r]
	}
	return longNames[0]
}

var endNames = [...]string{"?", "preempted", "yield", "suspend", "complete", "cancel"}

// EndName names a KindSliceEnd reason.
func EndName(r uint8) string {
	if int(r) < len(endNames) {
		return endNames[r]
	}
	return endNames[0]
}

// Event flags.
const (
	// Exact: Time was read from the clock for this event. Other events
	// carry the time of the last exact one on their track; the writer
	// spreads them evenly up to the next exact one (doc.go).
	Exact uint8 = 1 << iota
)

// Event is one scheduler event: 40 bytes without pointers, so that a
// ring of them is one allocation the garbage collector does not scan.
// Which fields a kind uses is said at the kind.
type Event struct {
	Time int64  // nanoseconds on the scheduler's monotonic clock
	Task uint64 // the task's id, 0 when none
	Arg  uint64 // kind-specific
	Fn   uint32 // the function's name in the Strings table, 0 when none
	PC   int32  // the pc in Fn
	// Flow is the wait generation (low 32 bits) a wake ends, at a wake,
	// a spawn and the dispatch that follows either; with Task it names
	// one arrow (0: none).
	Flow   uint32
	Kind   Kind
	Reason uint8 // KindSliceEnd, KindLong
	Flags  uint8 // Exact
}
