package bus_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

const selProg = `
.abi 1.5
; ready: case 0 receives on an empty channel, case 1 on one holding 5;
; case 1 fires, and the losing channel keeps nothing taken: a value sent
; to it afterwards is still there. Returns 100*case + value + 10*len(a).
.func ready() -> i64
  .local a:ref, b:ref, s:ref, one:i64, v:i64, i:i64, c0:i64, c1:i64, neg:i64, l:i64
  const one, 1
  intr  a, chan.new_i64, one
  intr  b, chan.new_i64, one
  const v, 5
  intr  _, chan.send_i64, b, v
  intr  s, sel.new
  intr  c0, sel.recv, s, a
  intr  c1, sel.recv, s, b
  const neg, -1
  intr  i, sel.wait, s, neg
  intr  v, sel.value_i64, s
  muli  i, i, 100
  add   v, v, i
  intr  _, chan.send_i64, a, one
  intr  l, chan.len, a
  muli  l, l, 10
  add   v, v, l
  ret   v
.end

; deadline: nothing ready, a 2 ms deadline: -1; then a poll (0): -1.
.func deadline() -> i64
  .local a:ref, s:ref, one:i64, d:i64, i:i64, j:i64
  const one, 1
  intr  a, chan.new_i64, one
  intr  s, sel.new
  intr  _, sel.recv, s, a
  const d, 2000000
  intr  i, sel.wait, s, d
  const d, 0
  intr  j, sel.wait, s, d
  add   i, i, j
  ret   i
.end

; sendcase: case 0 sends 7 on a full channel, case 1 sends 9 on an empty
; buffered one: case 1 fires; the full channel still holds only its 3.
; Then the send case 1 is spent (no value) until sel.set_i64; with the
; buffer of case 1 full and case 0 full too, the deadline fires (-1).
; Returns 1000*first + 100*(second+1) + recv(full) + 10*recv(b).
.func sendcase() -> i64
  .local full:ref, b:ref, s:ref, one:i64, v:i64, i:i64, j:i64, neg:i64, d:i64, x:i64, y:i64
  const one, 1
  intr  full, chan.new_i64, one
  intr  b, chan.new_i64, one
  const v, 3
  intr  _, chan.send_i64, full, v
  intr  s, sel.new
  const v, 7
  intr  _, sel.send_i64, s, full, v
  const v, 9
  intr  _, sel.send_i64, s, b, v
  const neg, -1
  intr  i, sel.wait, s, neg
  const d, 1000000
  intr  j, sel.wait, s, d
  intr  x, chan.recv_i64, full
  intr  y, chan.recv_i64, b
  muli  i, i, 1000
  addi  j, j, 1
  muli  j, j, 100
  muli  y, y, 10
  add   i, i, j
  add   i, i, x
  add   i, i, y
  ret   i
.end

; parked: the select parks on two empty channels; a child sends 11 on
; the second. Returns 100*case + value.
.func parked() -> i64
  .local a:ref, b:ref, s:ref, z:i64, t:ref, i:i64, v:i64, neg:i64
  const z, 0
  intr  a, chan.new_i64, z
  intr  b, chan.new_i64, z
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.recv, s, b
  spawn t, feed, b
  const neg, -1
  intr  i, sel.wait, s, neg
  intr  v, sel.value_i64, s
  joinv t
  muli  i, i, 100
  add   v, v, i
  ret   v
.end

.func feed(ch:ref) -> void
  .local v:i64
  const v, 11
  intr  _, chan.send_i64, ch, v
  retv
.end

; closedcase: a receive case on a closed channel fires with sel.closed 1
; and sel.value_i64 throws ClosedError; a send case on a closed channel
; throws ClosedError from sel.wait. Returns "closed|kind|msg|kind|msg".
.func closedcase() -> ref
  .local a:ref, s:ref, s2:ref, one:i64, i:i64, c:i64, neg:i64, e:ref, k:ref, m:ref, out:ref, bar:ref, v:i64
  const one, 1
  const neg, -1
  const bar, "|"
  intr  a, chan.new_i64, one
  intr  _, chan.close, a
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  i, sel.wait, s, neg
  intr  c, sel.closed, s
  const out, "0"
  jz    c, v1
  const out, "1"
v1:
  .try  vb, ve, vh, e
vb:
  intr  v, sel.value_i64, s
ve:
  ret   bar
vh:
  errkind k, e
  errmsg  m, e
  sconcat out, out, bar
  sconcat out, out, k
  sconcat out, out, bar
  sconcat out, out, m
  intr  s2, sel.new
  intr  _, sel.send_i64, s2, a, one
  .try  wb, we, wh, e
wb:
  intr  i, sel.wait, s2, neg
we:
  ret   bar
wh:
  errkind k, e
  errmsg  m, e
  sconcat out, out, bar
  sconcat out, out, k
  sconcat out, out, bar
  sconcat out, out, m
  ret   out
.end

; fair: two channels each hold n values; n selects over both: returns
; how many fired case 0.
.func fair(n:i64) -> i64
  .local a:ref, b:ref, s:ref, i:i64, k:i64, c:i64, neg:i64, v:i64
  intr  a, chan.new_i64, n
  intr  b, chan.new_i64, n
  const i, 0
fill:
  jge   i, n, filled
  intr  _, chan.send_i64, a, i
  intr  _, chan.send_i64, b, i
  addi  i, i, 1
  jmp   fill
filled:
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.recv, s, b
  const neg, -1
  const i, 0
  const c, 0
loop:
  jge   i, n, done
  intr  k, sel.wait, s, neg
  intr  v, sel.value_i64, s
  jnz   k, next
  addi  c, c, 1
next:
  addi  i, i, 1
  jmp   loop
done:
  ret   c
.end

; drain: waits on a channel and the drain at once; returns the case
; that fired (1, the drain) * 10 + sel.closed.
.func drain() -> i64
  .local a:ref, d:ref, s:ref, z:i64, i:i64, c:i64, neg:i64
  const z, 0
  intr  a, chan.new_i64, z
  intr  d, chan.drain
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.recv, s, d
  const neg, -1
  intr  i, sel.wait, s, neg
  intr  c, sel.closed, s
  muli  i, i, 10
  add   i, i, c
  ret   i
.end

; evkept: a kept signal fires the event case; the next wait finds no
; signal (-1 after 1 ms). Returns 10*first + second.
.func evkept() -> i64
  .local a:ref, ev:ref, s:ref, one:i64, i:i64, j:i64, d:i64
  const one, 1
  intr  a, chan.new_i64, one
  intr  ev, event.new
  intr  _, event.signal, ev
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.event, s, ev
  const d, -1
  intr  i, sel.wait, s, d
  const d, 1000000
  intr  j, sel.wait, s, d
  muli  i, i, 10
  add   i, i, j
  ret   i
.end

; evlose: a channel holding a value and a signalled event, both ready:
; whichever case loses keeps what it had (the event its signal, the
; channel its value). Returns 10*case + 1 when the loser kept it.
.func evlose() -> i64
  .local a:ref, ev:ref, s:ref, one:i64, i:i64, l:i64, d:i64, e:ref, kept:i64
  const one, 1
  intr  a, chan.new_i64, one
  intr  _, chan.send_i64, a, one
  intr  ev, event.new
  intr  _, event.signal, ev
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.event, s, ev
  const d, -1
  intr  i, sel.wait, s, d
  const kept, 0
  jz    i, chanwon
  intr  l, chan.len, a
  add   kept, kept, l
  jmp   out
chanwon:
  const d, 1000000
  intr  _, time.timeout, d
  .try  wb, we, wh, e
wb:
  intr  _, event.wait, ev
we:
  const kept, 1
wh:
out:
  muli  i, i, 10
  add   i, i, kept
  ret   i
.end

; evparked: the select parks on an empty channel and an event; a child
; signals the event. Returns the case (1).
.func evparked() -> i64
  .local a:ref, ev:ref, s:ref, one:i64, i:i64, d:i64, t:ref
  const one, 1
  intr  a, chan.new_i64, one
  intr  ev, event.new
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.event, s, ev
  spawn t, signaller, ev
  const d, -1
  intr  i, sel.wait, s, d
  joinv t
  ret   i
.end

.func signaller(ev:ref) -> void
  intr  _, event.signal, ev
  retv
.end

; takehold: a select receives from ch (fast path), then the task waits
; for ever without reading the value (the test cancels it).
.func takehold(ch:ref) -> i64
  .local s:ref, neg:i64, i:i64, z:i64, b:ref
  intr  s, sel.new
  intr  _, sel.recv, s, ch
  const neg, -1
  intr  i, sel.wait, s, neg
  const z, 0
  intr  b, chan.new_i64, z
  intr  i, chan.recv_i64, b
  ret   i
.end

; drainmisuse: a send on the drain channel and its close throw Error.
.func drainmisuse() -> ref
  .local d:ref, e:ref, m:ref, m2:ref, one:i64, bar:ref
  const one, 1
  const bar, "|"
  intr  d, chan.drain
  .try  sb, se, sh, e
sb:
  intr  _, chan.send_i64, d, one
se:
  ret   bar
sh:
  errmsg m, e
  .try  cb, ce, ch, e
cb:
  intr  _, chan.close, d
ce:
  ret   bar
ch:
  errmsg m2, e
  sconcat m, m, bar
  sconcat m, m, m2
  ret   m
.end

; evstale: the select parks on a channel and an event; a child's send
; (after 5 ms) fires the channel case; a signal that then meets the
; select's stale entry in the event's queue loses, and the event keeps
; it: the next event.wait returns at once. Returns 10*case + 1.
.func evstale() -> i64
  .local a:ref, ev:ref, s:ref, z:i64, i:i64, d:i64, t:ref
  const z, 0
  intr  a, chan.new_i64, z
  intr  ev, event.new
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.event, s, ev
  spawn t, latefeed, a
  const d, -1
  intr  i, sel.wait, s, d
  joinv t
  intr  _, event.signal, ev
  const d, 1000000000
  intr  _, time.timeout, d
  intr  _, event.wait, ev
  muli  i, i, 10
  addi  i, i, 1
  ret   i
.end

.func latefeed(ch:ref) -> void
  .local v:i64, d:i64
  const d, 5000000
  intr  _, time.sleep, d
  const v, 11
  intr  _, chan.send_i64, ch, v
  retv
.end

; sendf64: a send case of f64 on a channel given as a parameter.
.func sendf64(ch:ref) -> i64
  .local s:ref, x:f64, i:i64
  intr  s, sel.new
  const x, 1.5
  intr  i, sel.send_f64, s, ch, x
  ret   i
.end

; other: a select used by a task that did not make it.
.func other(s:ref) -> i64
  .local neg:i64, i:i64
  const neg, -1
  intr  i, sel.wait, s, neg
  ret   i
.end

.func mksel() -> ref
  .local s:ref
  intr  s, sel.new
  ret   s
.end

.func empty() -> i64
  .local s:ref, neg:i64, i:i64
  intr  s, sel.new
  const neg, -1
  intr  i, sel.wait, s, neg
  ret   i
.end
`

// TestSelectOperations: a ready case fires and the others keep their
// values; the deadline; send cases; a parked select woken by a send;
// closed channels; the drain as a case.
func TestSelectOperations(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, selProg)
	run := func(fn string, args ...vmloop.Value) sched.Outcome {
		t.Helper()
		o := testkit.SpawnAwait(t, m, p, fn, args...)
		require.Equal(t, sched.Success, o.Kind, "%s: %v", fn, o)
		return o
	}
	require.Equal(t, int64(100+5+10), run("ready").Value.Int())
	require.Equal(t, int64(-2), run("deadline").Value.Int())
	require.Equal(t, int64(1000*1+100*0+3+10*9), run("sendcase").Value.Int())
	require.Equal(t, int64(100+11), run("parked").Value.Int())
	require.Equal(t, "1|ClosedError|sel.value_i64: case 0: the channel is closed and drained|ClosedError|sel.wait: case 0: send on a closed channel (the value was not sent)",
		run("closedcase").Value.String())

	require.Equal(t, int64(10*1-1), run("evkept").Value.Int())
	require.Equal(t, int64(1), run("evparked").Value.Int())
	require.Equal(t, int64(1), run("evstale").Value.Int())
	seen := map[int64]int{}
	for range 200 {
		seen[run("evlose").Value.Int()]++
	}
	require.Equal(t, 200, seen[1]+seen[11], "the losing case kept its value or signal: %v", seen)
	require.NotZero(t, seen[1], "%v", seen)
	require.NotZero(t, seen[11], "%v", seen)

	require.Equal(t, "chan.send_i64: nothing is sent on the drain channel (chan.drain): it only closes when the drain begins|chan.close: the drain channel (chan.drain) is closed only by the drain",
		run("drainmisuse").Value.String())

	h, err := m.Spawn(m, p, "drain")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	b.StopListening()
	o := testkit.Await(t, h)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(11), o.Value.Int())
	require.Equal(t, int64(11), run("drain").Value.Int(), "a select after the drain sees it at once")
}

// TestSelectUnreadValueGivenBack: a value a select received, whose task
// was cancelled before it read it, gives its bytes back to the sender's
// engine once the select is collected.
func TestSelectUnreadValueGivenBack(t *testing.T) {
	b, m := timeBus(t, 1, sched.ResourceLimits{})
	p := testkit.Prog(t, b, selProg)
	ch, err := m.NewChan(vmloop.KindString, 1)
	require.NoError(t, err)
	before := m.Engine().MemoryBytes()
	require.NoError(t, m.Send(context.Background(), ch, vmloop.Str("a message of some length")))
	require.Greater(t, m.Engine().MemoryBytes(), before)
	task := testkit.Spawn(t, m, p, "takehold", ch)
	testkit.WaitFor(t, func() bool { n, _ := bus.ChanLen(ch); return n == 0 }, "the select took the message")
	require.NoError(t, m.Cancel(task))
	require.Equal(t, sched.Cancelled, testkit.Await(t, task).Kind)
	testkit.WaitFor(t, func() bool { runtime.GC(); return m.Engine().MemoryBytes() <= before },
		"the engine's memory back to %d bytes", before)
}

// TestSelectFair: with both cases ready every time, each is chosen about
// half the time (a loose bound: 2,000 waits, each case within 35–65 %).
func TestSelectFair(t *testing.T) {
	b, m := timeBus(t, 1, sched.ResourceLimits{})
	p := testkit.Prog(t, b, selProg)
	o := testkit.SpawnAwait(t, m, p, "fair", vmloop.I64(2000))
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.InDelta(t, 1000, o.Value.Int(), 300)
}

// TestSelectBadInput: a select used by another task, a select without
// cases.
func TestSelectBadInput(t *testing.T) {
	b, m := timeBus(t, 1, sched.ResourceLimits{})
	p := testkit.Prog(t, b, selProg)
	o := testkit.SpawnAwait(t, m, p, "mksel")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	o = testkit.SpawnAwait(t, m, p, "other", o.Value)
	require.Equal(t, sched.Failure, o.Kind, "%v", o)
	require.Contains(t, o.String(), "sel.wait: the select belongs to task")
	o = testkit.SpawnAwait(t, m, p, "empty")
	require.Equal(t, sched.Failure, o.Kind, "%v", o)
	require.Contains(t, o.String(), "sel.wait: the select has no cases")

	// A send case of the wrong element type the verifier sees: refused
	// at load, with its line.
	q, err := jasm.Assemble("bad.jasm", []byte(`.abi 1.5
.func main() -> i64
  .local ch:ref, s:ref, n:i64, x:f64
  const n, 4
  intr  ch, chan.new_i64, n
  intr  s, sel.new
  const x, 1.5
  intr  n, sel.send_f64, s, ch, x
  ret   n
.end
`))
	require.NoError(t, err)
	err = b.Load(q)
	require.Error(t, err)
	require.Contains(t, err.Error(), "bad.jasm:8")
	require.Contains(t, err.Error(), "intr sel.send_f64: ")
	require.Contains(t, err.Error(), "holds a channel of i64 elements (made by chan.new_i64) on every path, not of f64; use sel.send_i64, or a channel of f64")

	// One the verifier cannot see (a parameter) traps at run time.
	ch, err := m.NewChan(vmloop.KindI64, 1)
	require.NoError(t, err)
	o = testkit.SpawnAwait(t, m, p, "sendf64", ch)
	require.Equal(t, sched.Trapped, o.Kind, "%v", o)
	require.Contains(t, o.Trap.Error(), "sel.send_f64: wrong element type: the channel carries i64")
}
