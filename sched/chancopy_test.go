package sched_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// srcChanCopy: send(n) sends an n-element ref array of one string to a
// child that receives it and returns its length; recv(n) receives one
// from a child that sends it, selrecv(n) through a select. Each returns
// the length received.
const srcChanCopy = `
.abi 1.5
.func send(n:i64) -> i64
  .local ch:ref, c:ref, a:ref, r:i64, k:i64
  const   k, 1
  intr    ch, chan.new_ref, k
  spawn   c, receiver, ch
  call    a, fill, n
  intr    _, chan.send_ref, ch, a
  join    r, c
  ret     r
.end
.func receiver(ch:ref) -> i64
  .local a:ref, r:i64
  intr    a, chan.recv_ref, ch
  alen    r, a
  ret     r
.end
.func recv(n:i64) -> i64
  .local ch:ref, c:ref, a:ref, r:i64, k:i64
  const   k, 1
  intr    ch, chan.new_ref, k
  spawn   c, sender, ch, n
  intr    a, chan.recv_ref, ch
  alen    r, a
  ret     r
.end
.func selrecv(n:i64) -> i64
  .local ch:ref, c:ref, a:ref, r:i64, k:i64, s:ref
  const   k, 1
  intr    ch, chan.new_ref, k
  spawn   c, sender, ch, n
  intr    s, sel.new
  intr    _, sel.recv, s, ch
  const   k, -1
  intr    r, sel.wait, s, k
  intr    a, sel.value_ref, s
  alen    r, a
  ret     r
.end
.func sender(ch:ref, n:i64) -> i64
  .local a:ref, z:i64
  call    a, fill, n
  intr    _, chan.send_ref, ch, a
  const   z, 0
  ret     z
.end
.func keep(n:i64) -> i64
  .local ch:ref, a:ref, k:i64
  const   k, 1
  intr    ch, chan.new_ref, k
  call    a, fill, n
  intr    _, chan.send_ref, ch, a
  intr    k, chan.len, ch
  ret     k
.end
.func fill(n:i64) -> ref
  .local i:i64, a:ref, s:ref
  anew    a, n, ref
  const   s, "x"
  const   i, 0
fill:
  asetr   a, i, s
  addi    i, i, 1
  jlt     i, n, fill
  ret     a
.end`

// TestChanCopyInSteps: a 1M-element message is copied out of the
// sender's heap over many of the sender's slices (before it is offered
// to the channel) and into the receiver's heap over many of the
// receiver's (a receive's or a select's value), in steps the worker takes between other tasks' slices, not
// in one long step of each (each about 32M reductions' worth: 640 slices
// of a 50,000 limit; they took 1 or 2); both VM loops.
func TestChanCopyInSteps(t *testing.T) {
	const n = 1_000_000
	for _, goLoop := range []bool{false, true} {
		for _, fn := range []string{"send", "recv", "selrecv"} {
			t.Run(map[bool]string{false: "native", true: "goloop"}[goLoop]+"/"+fn, func(t *testing.T) {
				rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, GoLoop: goLoop, ReductionLimit: 50_000})
				p := testkit.Load(t, rt, srcChanCopy)
				tk, err := rt.Spawn(p, fn, vmloop.I64(n))
				require.NoError(t, err)
				o, err := tk.Wait(context.Background())
				require.NoError(t, err)
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				require.Equal(t, int64(n), o.Value.Int())
				st := hostbus.Task(tk).Stats()
				require.NotNil(t, st)
				// the fill (send) is about 60 slices, the copy about 640
				require.GreaterOrEqual(t, st.Slices, int64(300), "the copy is spread over the task's slices")
				require.GreaterOrEqual(t, st.Reductions, uint64(n*32-1<<20), "charged the copy")
			})
		}
	}
}

// TestChanSendCopyCancelled: a sender cancelled while its message is
// being copied out of its heap ends Cancelled, sent nothing, and what the
// copy reserved of the engine's memory budget goes back with its heap.
func TestChanSendCopyCancelled(t *testing.T) {
	const n = 1_000_000
	rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, ReductionLimit: 5000})
	p := testkit.Load(t, rt, srcChanCopy)
	eng := hostbus.Scheduler(rt)
	tk, err := rt.Spawn(p, "keep", vmloop.I64(n))
	require.NoError(t, err)
	mem := hostbus.Task(tk).Engine()
	// the fill takes about 600 slices, then the copy about 2,000
	testkit.WaitFor(t, func() bool { return hostbus.Task(tk).Stats().Slices >= 1000 })
	at := hostbus.Task(tk).Stats().Slices
	require.NoError(t, tk.Cancel())
	o, err := tk.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Cancelled, o.Kind, "%v", o)
	require.Less(t, at, int64(2400), "cancelled during the copy")
	testkit.WaitFor(t, func() bool { return eng.LiveTasks() == 0 && mem.MemoryBytes() == 0 })
}

// TestChanRecvCopyCancelled: a receiver cancelled while the message it
// took is being imported into its heap ends Cancelled, and everything
// goes back: what the import made goes with its heap, the message's
// charge with the message, and the engine's memory count returns to zero.
func TestChanRecvCopyCancelled(t *testing.T) {
	const n = 1_000_000
	rt := testkit.Runtime(t, jade.Options{Workers: 1, TaskStats: true, ReductionLimit: 5000})
	p := testkit.Load(t, rt, srcChanCopy)
	eng := hostbus.Scheduler(rt)
	tk, err := rt.Spawn(p, "recv", vmloop.I64(n))
	require.NoError(t, err)
	mem := hostbus.Task(tk).Engine()
	// the sender's fill and copy take about 2,600 of its slices, then the
	// import about 2,000 of the receiver's
	testkit.WaitFor(t, func() bool { return eng.LiveTasks() == 1 && hostbus.Task(tk).Stats().Slices >= 100 })
	at := hostbus.Task(tk).Stats().Slices
	require.NoError(t, tk.Cancel())
	o, err := tk.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, sched.Cancelled, o.Kind, "%v", o)
	require.Less(t, at, int64(1500), "cancelled during the import")
	testkit.WaitFor(t, func() bool { return eng.LiveTasks() == 0 && mem.MemoryBytes() == 0 })
}
