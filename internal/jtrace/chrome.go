package jtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Encoder writes events as Chrome trace-event JSON (the format of
// chrome://tracing, which ui.perfetto.dev opens): one thread track per
// ring, each task slice a complete ("X") event named by the function it
// was dispatched in, parks and Go hand-overs as slices of their own, the
// other events as instants, and an arrow (a v1 flow, "s" to "f") from
// each spawn or wake to the dispatch it caused. Events of a track must be
// added in the order they were written; tracks may interleave.
type Encoder struct {
	w      *bufio.Writer
	strs   *Strings
	quoted map[uint32][]byte // strs ids as JSON strings
	lines  map[uint32]Lines  // strs' Lines of the functions met, nil ones too
	tracks []trackState
	n      int // events written (a comma before every one but the first)
	err    error
	buf    []byte
}

// trackState is what the encoder knows of one track between events.
type trackState struct {
	pend   []Event // non-exact events since the last exact one
	seen   bool    // some event was written
	first  int64   // time of the first event written
	last   int64   // time of the last event written
	open   Event   // the dispatch whose slice is open
	isOpen bool
	openT  int64
	parked bool
	parkT  int64
	// ended is the task of the last slice that ended, from endFrom to
	// endTo: the waker of the joiners its completion wakes just after.
	ended          uint64
	endFrom, endTo int64
}

// NewEncoder starts a trace on w with one track per name (its index is
// the track number events are added under); strs names the events'
// functions and tasks.
func NewEncoder(w io.Writer, tracks []string, strs *Strings) *Encoder {
	e := &Encoder{w: bufio.NewWriterSize(w, 64<<10), strs: strs, quoted: map[uint32][]byte{},
		lines: map[uint32]Lines{}, tracks: make([]trackState, len(tracks))}
	e.w.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	e.raw([]byte(`{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"jade"}}`))
	for i, name := range tracks {
		q, _ := json.Marshal(name)
		e.raw(fmt.Appendf(nil, `{"name":"thread_name","ph":"M","pid":1,"tid":%d,"args":{"name":%s}}`, i, q))
		e.raw(fmt.Appendf(nil, `{"name":"thread_sort_index","ph":"M","pid":1,"tid":%d,"args":{"sort_index":%d}}`, i, i))
	}
	return e
}

// raw writes one JSON object of the event array.
func (e *Encoder) raw(b []byte) {
	if e.n > 0 {
		e.w.WriteByte(',')
	}
	e.n++
	e.w.Write(b)
}

// Add encodes evs, the next events of track.
func (e *Encoder) Add(track int, evs []Event) {
	if track < 0 || track >= len(e.tracks) {
		if e.err == nil {
			e.err = fmt.Errorf("jtrace: encode: track %d of %d", track, len(e.tracks))
		}
		return
	}
	tr := &e.tracks[track]
	for _, ev := range evs {
		if ev.Flags&Exact == 0 {
			tr.pend = append(tr.pend, ev)
			continue
		}
		e.spread(track, tr, startOf(ev))
		e.emit(track, tr, ev, ev.Time)
	}
}

// startOf is when ev began: a Go hand-over and a GC pause end at Time
// after Arg nanoseconds, every other event is an instant.
func startOf(ev Event) int64 {
	if ev.Kind == KindGoYield || ev.Kind == KindGC {
		return ev.Time - int64(ev.Arg)
	}
	return ev.Time
}

// maxSpread bounds the time between two events without a clock read
// that the encoder places between two exact ones (doc.go, "Time").
const maxSpread = 1000 // ns

// spread writes the pending events of tr at times spread evenly between
// the last exact time and until, at most maxSpread apart (doc.go,
// "Time").
func (e *Encoder) spread(track int, tr *trackState, until int64) {
	if len(tr.pend) == 0 {
		return
	}
	base := tr.last
	if !tr.seen {
		base = tr.pend[0].Time
	}
	step := int64(1)
	if until > base {
		step = min((until-base)/int64(len(tr.pend)+1), maxSpread)
	}
	for i, p := range tr.pend {
		e.emit(track, tr, p, base+step*int64(i+1))
	}
	tr.pend = tr.pend[:0]
}

// Close ends the trace at time end (open slices and parks end there) and
// writes what is buffered; dropped is reported in the trace's metadata.
func (e *Encoder) Close(end int64, dropped uint64) error {
	for i := range e.tracks {
		tr := &e.tracks[i]
		e.spread(i, tr, 0)
		end := max(end, tr.last)
		if tr.isOpen {
			e.slice(i, tr.openT, end, tr.open, Event{}, "running")
			tr.isOpen = false
		}
		if tr.parked {
			e.span(i, "parked", "park", tr.parkT, end, "")
			tr.parked = false
		}
	}
	fmt.Fprintf(e.w, `],"otherData":{"producer":"jade","droppedEvents":%d}}`, dropped)
	if err := e.w.Flush(); err != nil && e.err == nil {
		e.err = fmt.Errorf("jtrace: encode: %w", err)
	}
	return e.err
}

// emit encodes ev of track at time t.
func (e *Encoder) emit(track int, tr *trackState, ev Event, t int64) {
	from := tr.last // the track's time before ev: no slice of it starts earlier
	t = max(t, tr.last)
	if !tr.seen {
		tr.seen, tr.first = true, t
	}
	tr.last = t
	switch ev.Kind {
	case KindDispatch:
		if tr.isOpen {
			e.slice(track, tr.openT, t, tr.open, Event{}, "no end seen")
		}
		tr.open, tr.isOpen, tr.openT = ev, true, t
		if ev.Flow != 0 {
			e.flow(track, 'f', ev, t)
		}
	case KindSliceEnd:
		from := tr.first
		if tr.isOpen && tr.open.Task == ev.Task {
			from = tr.openT
			e.slice(track, from, t, tr.open, ev, "")
		} else {
			e.slice(track, from, t, ev, ev, "start not recorded")
		}
		tr.isOpen = false
		tr.ended, tr.endFrom, tr.endTo = ev.Task, from, t
		if ev.Arg != 0 {
			// A spawn folded into the end of the slice that made it: shown
			// inside that slice, where its arrow leaves.
			sp, ft := Event{Kind: KindSpawn, Task: ev.Arg, Arg: ev.Task, Flow: ev.Flow}, max(t-1, from)
			e.instant(track, sp, ft, "by", int64(ev.Task), "")
			if sp.Flow != 0 {
				e.flow(track, 's', sp, ft)
			}
		}
	case KindPark:
		tr.parked, tr.parkT = true, t
	case KindUnpark:
		from := tr.parkT
		if !tr.parked {
			from = tr.first
		}
		e.span(track, "parked", "park", from, t, fmt.Sprintf(`"reaped":%d`, ev.Arg))
		tr.parked = false
	case KindGoYield:
		e.span(track, "go hand-over", "go", max(t-int64(ev.Arg), from), t, "")
	case KindGC:
		e.span(track, "GC "+strconv.FormatUint(ev.Task, 10), "gc", t-int64(ev.Arg), t,
			fmt.Sprintf(`"cycle":%d,"pausesNs":%d`, ev.Task, ev.Arg))
	case KindSpawn, KindWake:
		e.instant(track, ev, t, "by", int64(ev.Arg), "")
		if ev.Flow != 0 {
			ft := t
			if ev.Arg != 0 && !(tr.isOpen && tr.open.Task == ev.Arg) && ev.Arg == tr.ended {
				// Made by the slice that just ended (a completion waking
				// its joiners): the arrow leaves that slice.
				ft = max(tr.endTo-1, tr.endFrom)
			}
			e.flow(track, 's', ev, ft)
		}
	case KindSteal:
		e.instant(track, ev, t, "taken", int64(ev.Arg), "")
	case KindInject:
		e.instant(track, ev, t, "taken", int64(ev.Arg), "")
	case KindIOComplete:
		e.instant(track, ev, t, "res", int64(ev.Arg), "")
	case KindLong:
		e.instant(track, ev, t, "durNs", int64(ev.Arg), `"what":"`+LongName(ev.Reason)+`","at":`+e.at(ev))
	default:
		e.instant(track, ev, t, "arg", int64(ev.Arg), "")
	}
}

// str returns strs[id] as a JSON string.
func (e *Encoder) str(id uint32) []byte {
	q, ok := e.quoted[id]
	if !ok {
		q, _ = json.Marshal(e.strs.Get(id))
		e.quoted[id] = q
	}
	return q
}

// at returns ev's location as a JSON string (appendAt).
func (e *Encoder) at(ev Event) string { return string(e.appendAt(nil, ev)) }

// appendAt appends ev's location as a JSON string to b: "file:line
// (function)" where the function's lines are known (Strings.Func), else
// "function@pc".
func (e *Encoder) appendAt(b []byte, ev Event) []byte {
	if ev.Fn == 0 {
		return append(b, `"?"`...)
	}
	lines, ok := e.lines[ev.Fn]
	if !ok {
		lines = e.strs.Lines(ev.Fn)
		e.lines[ev.Fn] = lines
	}
	q := e.str(ev.Fn)
	if lines != nil {
		if file, line := lines(int(ev.PC)); line > 0 {
			fq, _ := json.Marshal(file)
			b = append(b, fq[:len(fq)-1]...)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(line), 10)
			b = append(b, " ("...)
			b = append(b, q[1:len(q)-1]...)
			return append(b, `)"`...)
		}
	}
	b = append(b, q[:len(q)-1]...)
	b = append(b, '@')
	b = strconv.AppendInt(b, int64(ev.PC), 10)
	return append(b, '"')
}

// us appends t (ns) in microseconds.
func us(b []byte, t int64) []byte {
	if t < 0 {
		b = append(b, '-')
		t = -t
	}
	b = strconv.AppendInt(b, t/1000, 10)
	f := t % 1000
	b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	return b
}

// slice writes the task slice of d (a dispatch) ending at end (an end
// event, or zero when none was seen: note says why).
func (e *Encoder) slice(track int, from, to int64, d, end Event, note string) {
	b := e.buf[:0]
	b = append(b, `{"name":`...)
	if d.Fn != 0 {
		b = append(b, e.str(d.Fn)...)
	} else {
		b = append(b, `"task"`...)
	}
	b = append(b, `,"cat":"task","ph":"X","ts":`...)
	b = us(b, from)
	b = append(b, `,"dur":`...)
	b = us(b, max(to-from, 0))
	b = append(b, `,"pid":1,"tid":`...)
	b = strconv.AppendInt(b, int64(track), 10)
	b = append(b, `,"args":{"task":`...)
	b = strconv.AppendUint(b, d.Task, 10)
	if d.Kind == KindDispatch && d.Arg != 0 {
		b = append(b, `,"taskName":`...)
		b = append(b, e.str(uint32(d.Arg))...)
	}
	if d.Kind == KindDispatch {
		b = append(b, `,"at":`...)
		b = e.appendAt(b, d)
	}
	if end.Kind == KindSliceEnd {
		b = append(b, `,"end":"`...)
		b = append(b, EndName(end.Reason)...)
		b = append(b, `","endAt":`...)
		b = e.appendAt(b, end)
	}
	if note != "" {
		b = append(b, `,"note":"`...)
		b = append(b, note...)
		b = append(b, '"')
	}
	b = append(b, "}}"...)
	e.buf = b
	e.raw(b)
}

// span writes a slice that is not a task's (a park, a Go hand-over, a
// GC pause); args is JSON object members or "".
func (e *Encoder) span(track int, name, cat string, from, to int64, args string) {
	b := append(e.buf[:0], `{"name":"`...)
	b = append(b, name...)
	b = append(b, `","cat":"`...)
	b = append(b, cat...)
	b = append(b, `","ph":"X","ts":`...)
	b = us(b, from)
	b = append(b, `,"dur":`...)
	b = us(b, max(to-from, 0))
	b = append(b, `,"pid":1,"tid":`...)
	b = strconv.AppendInt(b, int64(track), 10)
	b = append(b, `,"args":{`...)
	b = append(b, args...)
	b = append(b, "}}"...)
	e.buf = b
	e.raw(b)
}

// instant writes ev as an instant event on its track, with arguments
// task, key: val and the JSON object members extra (or "").
func (e *Encoder) instant(track int, ev Event, t int64, key string, val int64, extra string) {
	b := append(e.buf[:0], `{"name":"`...)
	b = append(b, ev.Kind.String()...)
	b = append(b, `","cat":"sched","ph":"i","s":"t","ts":`...)
	b = us(b, t)
	b = append(b, `,"pid":1,"tid":`...)
	b = strconv.AppendInt(b, int64(track), 10)
	b = append(b, `,"args":{"task":`...)
	b = strconv.AppendUint(b, ev.Task, 10)
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, val, 10)
	if extra != "" {
		b = append(b, ',')
		b = append(b, extra...)
	}
	b = append(b, "}}"...)
	e.buf = b
	e.raw(b)
}

// FlowID is the id of the arrow a spawn or wake of task with flow value
// flow starts and the dispatch with the same values ends.
func FlowID(task uint64, flow uint32) uint64 { return task<<20 | uint64(flow&(1<<20-1)) }

// flow writes the start ('s') or end ('f') of ev's arrow.
func (e *Encoder) flow(track int, ph byte, ev Event, t int64) {
	b := append(e.buf[:0], `{"name":"wake","cat":"flow","ph":"`...)
	b = append(b, ph)
	b = append(b, `","id":`...)
	b = strconv.AppendUint(b, FlowID(ev.Task, ev.Flow), 10)
	if ph == 'f' {
		b = append(b, `,"bp":"e"`...)
	}
	b = append(b, `,"ts":`...)
	b = us(b, t)
	b = append(b, `,"pid":1,"tid":`...)
	b = strconv.AppendInt(b, int64(track), 10)
	b = append(b, '}')
	e.buf = b
	e.raw(b)
}
