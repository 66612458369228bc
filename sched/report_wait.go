package sched

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jadevm/jade/vmloop"
)

// Task reports: where each live task is (file:line) and, for a Waiting
// task, what it waits for. Nothing here is recorded while tasks run: a
// report derives it when it is made, from the location the task
// published when it suspended (the instruction just before it is the
// request it waits in: the program is immutable) and, while the world is
// stopped (TasksWithStacks), from the task's pending request, read
// through the dispatcher (WaitDescriber: the scheduler knows only the
// identity of a wait, never what it means) and its timer.

// Wait kinds (Wait.Kind).
const (
	WaitJoin  = "join"  // the end of another task (task.join_*, task.outcome)
	WaitEvent = "event" // an event's signal (event.wait)
	WaitIO    = "io"    // a socket or file operation (net.*, file.*)
	WaitTimer = "timer" // a sleep or a periodic job's tick (time.*)
	WaitHost  = "host"  // a blocking host call
	WaitOther = "other"
)

// Wait says what a Waiting task waits for (TaskReport.Wait). Op and Kind
// are always known; the other fields only when the report was made with
// the world stopped (TasksWithStacks, the task dump), and only where they
// apply.
type Wait struct {
	// Op is the intrinsic the task waits in ("event.wait", "net.read").
	Op string `json:"op"`
	// Kind is one of the Wait* kinds.
	Kind string `json:"kind"`
	// For is what it waits for, in words ("task 7 \"worker\"", "event
	// done", "socket fd 9").
	For string `json:"for,omitempty"`
	// Task is the joined task's id (kind join).
	Task uint64 `json:"task,omitempty"`
	// Local and Peer are a socket's addresses (kind io).
	Local string `json:"local,omitempty"`
	Peer  string `json:"peer,omitempty"`
	// In is the time left, when the report was made, until the sleep
	// ends (Timeout false) or the wait's timeout fires (Timeout true); 0
	// with Timeout false: no deadline known. Negative: overdue.
	In      time.Duration `json:"inNs,omitempty"`
	Timeout bool          `json:"timeout,omitempty"`
}

// String says what the task waits for: "in net.read for socket fd 9
// (local 127.0.0.1:7000, peer 127.0.0.1:51234), timeout in 2s".
func (w *Wait) String() string {
	var b strings.Builder
	b.WriteString("in ")
	b.WriteString(w.Op)
	if w.For != "" {
		b.WriteString(" for ")
		b.WriteString(w.For)
	}
	if w.Local != "" || w.Peer != "" {
		b.WriteString(" (")
		if w.Local != "" {
			b.WriteString("local " + w.Local)
		}
		if w.Peer != "" {
			if w.Local != "" {
				b.WriteString(", ")
			}
			b.WriteString("peer " + w.Peer)
		}
		b.WriteByte(')')
	}
	switch {
	case w.Timeout:
		fmt.Fprintf(&b, ", timeout in %v", w.In)
	case w.In != 0:
		fmt.Fprintf(&b, ", ends in %v", w.In)
	}
	return b.String()
}

// WaitDescriber is implemented by a Dispatcher that can say what a
// suspended request waits for (the bus does). The scheduler calls it
// when it makes a report of a Waiting task.
type WaitDescriber interface {
	// DescribeWait describes the wait of t in intrinsic in. ex is t's
	// Exec, its request pending, when the world is stopped (read it, do
	// not change it); nil otherwise, and then only in may be looked at.
	// The scheduler fills In and Timeout.
	DescribeWait(t *Task, in *vmloop.Intrinsic, ex *vmloop.Exec) Wait
}

// report describes t. With stopped (a stopped world: no worker runs t),
// its Exec and timer are read too: the stack, the pending request and
// the timer's deadline; buf is the stack buffer to reuse.
func (s *Scheduler) report(t *Task, stopped bool, buf *[]vmloop.ProfFrame) TaskReport {
	st := t.State()
	w := t.where.Load()
	fn, pc := int(w>>32), int(uint32(w))
	var in *vmloop.Intrinsic
	if st == Waiting && t.x.Program() != nil {
		// A suspension published the pc just past its request.
		if in = t.x.Program().RequestAt(fn, pc-1); in != nil {
			pc--
		}
	}
	at := frameOf(t.x.Program(), vmloop.ProfFrame{Fn: int32(fn), PC: int32(pc)})
	r := TaskReport{ID: t.id, Engine: t.engine.name, State: st, Name: t.Name(), Stats: t.Stats()}
	var ex *vmloop.Exec
	if stopped && st != Completed { // a completed task's Exec may be another's now
		ex = t.ex()
		*buf = ex.ProfileStack((*buf)[:0])
		for _, fr := range *buf {
			r.Stack = append(r.Stack, frameOf(t.x.Program(), fr))
		}
		if len(r.Stack) > 0 {
			at = r.Stack[0] // exact while stopped
		}
		in = nil
		if req := ex.Request(); st == Waiting && req != nil {
			in = req.Intr
		}
	}
	r.Func, r.PC, r.File, r.Line = at.Func, at.PC, at.File, at.Line
	if in != nil {
		r.Wait = s.describeWait(t, in, ex)
	}
	return r
}

// describeWait asks the dispatcher what t waits for in intrinsic in (ex:
// see WaitDescriber) and adds its timer's deadline when ex is given. A
// describer that panics leaves the description at the intrinsic's name:
// a report must not bring the process down.
func (s *Scheduler) describeWait(t *Task, in *vmloop.Intrinsic, ex *vmloop.Exec) (w *Wait) {
	w = &Wait{Op: in.Name, Kind: WaitOther}
	if d, ok := s.disp.(WaitDescriber); ok {
		func() {
			defer func() {
				if recover() != nil {
					w = &Wait{Op: in.Name, Kind: WaitOther}
				}
			}()
			dw := d.DescribeWait(t, in, ex)
			w = &dw
		}()
	}
	if ex == nil || t.tm == nil {
		return w
	}
	now := nanotime()
	switch tm := t.tm; {
	case tm.hasDeadline:
		w.In, w.Timeout = time.Duration(tm.deadline-now), true
	case tm.owner != nil && tm.sh != nil:
		if d, ok := tm.sh.Deadline(tm.h); ok {
			w.In = time.Duration(d - now)
		}
	}
	return w
}

// Loc is where the task is, as reports print it: "file:line (function)",
// or "function@pc" when its program has no line information.
func (r TaskReport) Loc() string { return loc(r.Func, r.PC, r.File, r.Line) }

// Loc is the frame's location as reports print it (TaskReport.Loc).
func (f Frame) Loc() string { return loc(f.Func, f.PC, f.File, f.Line) }

// loc formats a location for reports: file:line when the line is known.
func loc(fn string, pc int, file string, line int) string {
	fn = vmloop.QuoteName(fn) // a name from a .jbc is never trusted
	if line <= 0 {
		return fn + "@" + strconv.Itoa(pc)
	}
	if strings.ContainsFunc(file, unicode.IsControl) {
		file = strconv.Quote(file)
	}
	return file + ":" + strconv.Itoa(line) + " (" + fn + ")"
}

// describe is TaskReport.String: "task 5 "name" (engine main) Waiting at
// kv.jasm:12 (kv_put) in event.wait for event ready".
func (r TaskReport) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %d", r.ID)
	if r.Name != "" {
		fmt.Fprintf(&b, " %q", r.Name)
	}
	fmt.Fprintf(&b, " (engine %s) %s at %s", r.Engine, r.State, r.Loc())
	if r.Wait != nil {
		b.WriteByte(' ')
		b.WriteString(r.Wait.String())
	}
	return b.String()
}

// Detail completes the reports SummarizeReports lists of rs — the first
// limit that are not Completed — with what TasksWithStacks would say of
// them (the stack, the joined task, the socket's addresses, the
// deadline), stopping the world for as long as it reads them and
// waiting at most timeout for it to stop. On an error rs is unchanged.
// A drain report calls it for the few tasks it names, where a full
// TasksWithStacks of millions of tasks would cost too much.
func (s *Scheduler) Detail(rs []TaskReport, limit int, timeout time.Duration) error {
	want := map[uint64]int{}
	for i, r := range rs {
		if len(want) == limit {
			break
		}
		if r.State != Completed {
			want[r.ID] = i
		}
	}
	if len(want) == 0 {
		return nil
	}
	got := make(map[int]TaskReport, len(want))
	var buf []vmloop.ProfFrame
	err := s.stopWorld(timeout, func() {
		s.registry.each(func(t *Task) {
			if i, ok := want[t.id]; ok {
				got[i] = s.report(t, true, &buf)
			}
		})
	})
	if err != nil {
		return err
	}
	for i, r := range got {
		rs[i] = r
	}
	return nil
}
