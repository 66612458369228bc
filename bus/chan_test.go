package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// chanProg exercises every channel intrinsic from one task and its
// children; each function returns what the test checks.
const chanProg = `
.abi 1.5
; basics: a buffered channel of capacity 2: try_send fills it, a third
; try_send finds it full (0), len and cap, try_recv takes the oldest as
; a one-element array, and an empty try_recv gives an empty array.
; Returns 1000*len + 100*cap + 10*full + the sum of the taken values.
.func basics() -> i64
  .local ch:ref, n:i64, v:i64, ok:i64, full:i64, l:i64, c:i64, a:ref, k:i64, sum:i64, r:i64
  const n, 2
  intr  ch, chan.new_i64, n
  const v, 7
  intr  ok, chan.try_send_i64, ch, v
  const v, 8
  intr  ok, chan.try_send_i64, ch, v
  const v, 9
  intr  full, chan.try_send_i64, ch, v
  intr  l, chan.len, ch
  intr  c, chan.cap, ch
  intr  a, chan.try_recv, ch
  alen  k, a
  const sum, 0
  const r, 0
  ageti sum, a, r
  intr  v, chan.recv_i64, ch
  add   sum, sum, v
  intr  a, chan.try_recv, ch
  alen  k, a
  add   sum, sum, k            ; 0: empty
  muli  l, l, 1000
  muli  c, c, 100
  muli  full, full, 10
  add   sum, sum, l
  add   sum, sum, c
  add   sum, sum, full
  ret   sum
.end

; rendezvous: capacity 0; a child receives three values and returns
; their sum; each send waits for the child.
.func rendezvous() -> i64
  .local ch:ref, z:i64, t:ref, v:i64, s:i64
  const z, 0
  intr  ch, chan.new_i64, z
  spawn t, summer, ch
  const v, 1
  intr  _, chan.send_i64, ch, v
  const v, 20
  intr  _, chan.send_i64, ch, v
  const v, 300
  intr  _, chan.send_i64, ch, v
  intr  _, chan.close, ch
  joini s, t
  ret   s
.end

.func summer(ch:ref) -> i64
  .local s:i64, v:i64, e:ref
  const s, 0
  .try  b, x, h, e
b:
  intr  v, chan.recv_i64, ch
x:
  add   s, s, v
  jmp   b
h:
  ret   s
.end

; closed: returns the error kinds and texts of a send on a closed
; channel, a recv once drained (after one buffered value), a second close.
.func closed() -> ref
  .local ch:ref, n:i64, v:i64, e:ref, k:ref, m:ref, out:ref, sep:ref
  const n, 4
  intr  ch, chan.new_i64, n
  const v, 5
  intr  _, chan.send_i64, ch, v
  intr  _, chan.close, ch
  const out, ""
  const sep, "|"
  .try  s0, s1, h0, e
s0:
  intr  _, chan.send_i64, ch, v
s1:
  jmp   rd0
h0:
  errkind k, e
  errmsg  m, e
  sconcat out, out, k
  sconcat out, out, sep
  sconcat out, out, m
  sconcat out, out, sep
rd0:
  intr  v, chan.recv_i64, ch     ; the buffered 5 is still there
  itos  m, v
  sconcat out, out, m
  sconcat out, out, sep
  .try  s2, s3, h1, e
s2:
  intr  v, chan.recv_i64, ch
s3:
  jmp   c0
h1:
  errkind k, e
  errmsg  m, e
  sconcat out, out, k
  sconcat out, out, sep
  sconcat out, out, m
  sconcat out, out, sep
c0:
  .try  s4, s5, h2, e
s4:
  intr  _, chan.close, ch
s5:
  ret   out
h2:
  errmsg  m, e
  sconcat out, out, m
  ret   out
.end

; negcap: chan.new with a negative capacity throws a catchable Error.
.func negcap() -> ref
  .local n:i64, ch:ref, e:ref, m:ref
  const n, -1
  .try  b, x, h, e
b:
  intr  ch, chan.new_ref, n
x:
  const m, "made"
  ret   m
h:
  errmsg m, e
  ret   m
.end

; refs: a string and an array cross; the receiver's change to the array
; is its own (the message was copied), so the sender still sees 1.
.func refs() -> i64
  .local ch:ref, n:i64, s:ref, a:ref, t:ref, z:i64, v:i64, l:i64
  const n, 2
  intr  ch, chan.new_ref, n
  const s, "hello"
  intr  _, chan.send_ref, ch, s
  anew  a, n, i64
  const z, 0
  const v, 1
  aseti a, z, v
  intr  _, chan.send_ref, ch, a
  spawn t, refrecv, ch
  joini l, t
  ageti v, a, z
  muli  l, l, 10
  add   l, l, v
  ret   l                       ; 10*(len("hello") + 99) + 1
.end

.func refrecv(ch:ref) -> i64
  .local s:ref, a:ref, z:i64, v:i64, l:i64
  intr  s, chan.recv_ref, ch
  intr  a, chan.recv_ref, ch
  const z, 0
  const v, 99
  aseti a, z, v
  ageti v, a, z
  slen  l, s
  add   l, l, v
  ret   l
.end

; timeouts: a recv on an empty channel and a send on a full one, each
; under time.timeout, throw TimeoutError and take or leave nothing:
; returns 10*len + (number of TimeoutErrors).
.func timeouts() -> i64
  .local ch:ref, n:i64, v:i64, d:i64, e:ref, k:ref, want:ref, c:i64, eq:i64, l:i64
  const n, 1
  intr  ch, chan.new_i64, n
  const d, 1000000             ; 1 ms
  const c, 0
  const want, "TimeoutError"
  intr  _, time.timeout, d
  .try  b0, x0, h0, e
b0:
  intr  v, chan.recv_i64, ch
x0:
  jmp   s1
h0:
  errkind k, e
  seq   eq, k, want
  add   c, c, eq
s1:
  const v, 5
  intr  _, chan.send_i64, ch, v
  const v, 6
  intr  _, time.timeout, d
  .try  b1, x1, h1, e
b1:
  intr  _, chan.send_i64, ch, v
x1:
  jmp   done
h1:
  errkind k, e
  seq   eq, k, want
  add   c, c, eq
done:
  intr  l, chan.len, ch
  intr  v, chan.recv_i64, ch   ; the 5, not the 6
  muli  l, l, 10
  add   c, c, l
  muli  v, v, 100
  add   c, c, v
  ret   c                      ; 100*5 + 10*1 + 2
.end

; wrongelem: a channel of f64 that arrives as a parameter (unknown to
; the verifier) used with recv_i64 traps with the element type named.
.func wrongelem(ch:ref) -> i64
  .local v:i64
  intr  v, chan.recv_i64, ch
  ret   v
.end

; freed: the task frees its own handle, then receives on it: the handle
; is stale (a trap, bad handle). The channel itself lives on for every
; other holder.
.func freed(ch:ref) -> i64
  .local v:i64
  free  ch
  intr  v, chan.recv_i64, ch
  ret   v
.end

; holdfree: frees its handle of ch; the parent's handle still works.
.func holdfree(ch:ref) -> void
  free  ch
  retv
.end

.func freeother() -> i64
  .local ch:ref, n:i64, t:ref, v:i64
  const n, 1
  intr  ch, chan.new_i64, n
  spawn t, holdfree, ch
  joinv t
  const v, 42
  intr  _, chan.send_i64, ch, v
  intr  v, chan.recv_i64, ch
  ret   v
.end
`

func chanBus(t *testing.T, workers int, lim sched.ResourceLimits) (*bus.Bus, *bus.Member, *vmloop.Program) {
	t.Helper()
	b, m := timeBus(t, workers, lim)
	return b, m, testkit.Prog(t, b, chanProg)
}

// TestChanOperations: the semantics of each operation from bytecode.
func TestChanOperations(t *testing.T) {
	_, m, p := chanBus(t, 2, sched.ResourceLimits{})
	run := func(fn string, args ...vmloop.Value) sched.Outcome {
		t.Helper()
		return testkit.SpawnAwait(t, m, p, fn, args...)
	}
	o := run("basics")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(2*1000+2*100+0*10+7+8), o.Value.Int())

	o = run("rendezvous")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(321), o.Value.Int())

	o = run("closed")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, "ClosedError|chan.send_i64: send on a closed channel|5|ClosedError|chan.recv_i64: the channel is closed and drained|chan.close: the channel is already closed", o.Value.String())

	o = run("negcap")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, "chan.new_ref: capacity -1 is negative (0 makes a rendezvous channel)", o.Value.String())

	o = run("refs")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(10*(5+99)+1), o.Value.Int())

	o = run("timeouts")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(100*5+10*1+2), o.Value.Int())

	o = run("freeother")
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(42), o.Value.Int())
}

// TestChanBadInput: a wrong element type the verifier cannot see traps
// naming it; a freed handle traps as stale; a wrong element type the
// verifier sees is refused at load with its line.
func TestChanBadInput(t *testing.T) {
	b, m, p := chanBus(t, 1, sched.ResourceLimits{})
	ch, err := m.NewChan(vmloop.KindF64, 1)
	require.NoError(t, err)
	o := testkit.SpawnAwait(t, m, p, "wrongelem", ch)
	require.Equal(t, sched.Trapped, o.Kind, "%v", o)
	require.Contains(t, o.Trap.Error(), "chan.recv_i64: wrong element type: the channel carries f64")

	ci, err := m.NewChan(vmloop.KindI64, 1)
	require.NoError(t, err)
	o = testkit.SpawnAwait(t, m, p, "freed", ci)
	require.Equal(t, sched.Trapped, o.Kind, "%v", o)
	require.Contains(t, o.Trap.Error(), "bad handle")

	_, err = m.NewChan(vmloop.KindI64, -3)
	require.ErrorContains(t, err, "bus: new channel: new: capacity -3: negative channel capacity")

	q, err := jasm.Assemble("bad.jasm", []byte(`.abi 1.5
.func main() -> i64
  .local ch:ref, n:i64, x:f64
  const n, 4
  intr  ch, chan.new_i64, n
  const x, 1.5
  intr  _, chan.send_f64, ch, x
  ret   n
.end
`))
	require.NoError(t, err)
	err = b.Load(q)
	require.Error(t, err)
	require.Contains(t, err.Error(), "bad.jasm:7")
	require.Contains(t, err.Error(), "intr chan.send_f64: ")
	require.Contains(t, err.Error(), "holds a channel of i64 elements (made by chan.new_i64) on every path, not of f64")

	// The same on one path only (a merge of an i64 and an f64 channel) is
	// left to the run-time check.
	q, err = jasm.Assemble("maybe.jasm", []byte(`.abi 1.5
.func main(k:i64) -> i64
  .local ch:ref, n:i64, x:f64
  const n, 4
  jz    k, other
  intr  ch, chan.new_i64, n
  jmp   send
other:
  intr  ch, chan.new_f64, n
send:
  const x, 1.5
  intr  _, chan.send_f64, ch, x
  ret   n
.end
`))
	require.NoError(t, err)
	require.NoError(t, b.Load(q))

	// A program for ABI 1.4 cannot name chan.*.
	q, err = jasm.Assemble("old.jasm", []byte(`.abi 1.4
.func main() -> i64
  .local ch:ref, n:i64
  const n, 4
  intr  ch, chan.new_i64, n
  ret   n
.end
`))
	if err == nil {
		err = b.Load(q)
	}
	require.ErrorContains(t, err, "1.5")
}

// TestChanHost: a host sends and receives with a context; a context that
// ends first leaves the message unsent (or untaken); values of the wrong
// kind and I/O handles are refused.
func TestChanHost(t *testing.T) {
	_, m, p := chanBus(t, 2, sched.ResourceLimits{})
	ch, err := m.NewChan(vmloop.KindI64, 0)
	require.NoError(t, err)
	task := testkit.Spawn(t, m, p, "summer", ch)
	ctx := context.Background()
	for _, v := range []int64{4, 40, 400} {
		require.NoError(t, m.Send(ctx, ch, vmloop.I64(v)))
	}
	require.NoError(t, m.CloseChan(ch))
	o := testkit.Await(t, task)
	require.Equal(t, int64(444), o.Value.Int(), "%v", o)
	require.ErrorIs(t, m.Send(ctx, ch, vmloop.I64(1)), bus.ErrChanClosed)
	require.ErrorIs(t, m.CloseChan(ch), bus.ErrChanClosed)
	_, err = m.Recv(ctx, ch)
	require.ErrorIs(t, err, bus.ErrChanClosed)

	// A rendezvous with no receiver: the send gives up with its context.
	ch2, err := m.NewChan(vmloop.KindI64, 0)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err = m.Send(short, ch2, vmloop.I64(1))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "not sent")
	short2, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	_, err = m.Recv(short2, ch2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	held, err := bus.ChanHeldBytes(ch2)
	require.NoError(t, err)
	require.Zero(t, held)

	require.ErrorContains(t, m.Send(ctx, ch2, vmloop.F64(1)), "value is f64, the channel carries i64")
	_, err = m.NewChan(vmloop.KindVoid, 1)
	require.Error(t, err)
	require.ErrorContains(t, m.Send(ctx, vmloop.I64(3), vmloop.I64(1)), "not a channel")
}
