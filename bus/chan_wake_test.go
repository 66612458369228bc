package bus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// wakeProg: a sender that reports whether its one send went through (1)
// or met a close (0), and a receiver that reports the value it took or
// -1 for the end of the channel.
const wakeProg = `
.abi 1.5
.func one_send(ch:ref, v:i64) -> i64
  .local r:i64, e:ref, k:ref, want:ref
  .try  b, x, h, e
b:
  intr  _, chan.send_i64, ch, v
x:
  const r, 1
  ret   r
h:
  errkind k, e
  const want, "ClosedError"
  seq   r, k, want
  subi  r, r, 1                ; ClosedError: 0; anything else: -1
  ret   r
.end

.func one_recv(ch:ref) -> i64
  .local v:i64, e:ref, k:ref, want:ref, r:i64
  .try  b, x, h, e
b:
  intr  v, chan.recv_i64, ch
x:
  ret   v
h:
  errkind k, e
  const want, "ClosedError"
  seq   r, k, want
  subi  r, r, 2                ; ClosedError: -1; anything else: -2
  ret   r
.end
`

// TestChanCloseWakesEveryWaiter is the lost wake-up stress: a full
// channel with many parked senders, then a close; an empty channel with
// many parked receivers, then a few sends and a close; and the same with
// the close racing the waiters as they arrive. Every waiter ends (none
// is left parked), each sender learns whether its value went through,
// and what went through is received once.
func TestChanCloseWakesEveryWaiter(t *testing.T) {
	rounds, n := 20, 64
	if raceEnabled {
		rounds = 5
	}
	testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
		b, m := timeBus(t, workers, sched.ResourceLimits{})
		p := testkit.Prog(t, b, wakeProg)
		ctx := context.Background()
		for round := 0; round < rounds; round++ {
			race := round%2 == 1
			// Parked senders on a full channel, then a close.
			ch, err := m.NewChan(vmloop.KindI64, 4)
			require.NoError(t, err)
			for i := 0; i < 4; i++ {
				require.NoError(t, m.Send(ctx, ch, vmloop.I64(int64(1000+i))))
			}
			var ts []*sched.Task
			waiting := b.Scheduler().WaitingTasks()
			for i := 0; i < n; i++ {
				ts = append(ts, testkit.Spawn(t, m, p, "one_send", ch, vmloop.I64(int64(i))))
			}
			if !race {
				testkit.WaitFor(t, func() bool { return b.Scheduler().WaitingTasks() >= waiting+int64(n) }, "senders parked")
			}
			require.NoError(t, m.CloseChan(ch))
			sent := 0
			for _, task := range ts {
				o := testkit.Await(t, task)
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				require.Contains(t, []int64{0, 1}, o.Value.Int())
				sent += int(o.Value.Int())
			}
			require.Zero(t, sent, "a send into a full channel went through with no receiver")
			got := drain(t, m, ch)
			require.Equal(t, []int64{1000, 1001, 1002, 1003}, got)

			// Parked receivers on an empty channel, k sends, then a close.
			ch, err = m.NewChan(vmloop.KindI64, 0)
			require.NoError(t, err)
			ts = ts[:0]
			for i := 0; i < n; i++ {
				ts = append(ts, testkit.Spawn(t, m, p, "one_recv", ch))
			}
			if !race {
				testkit.WaitFor(t, func() bool { return b.Scheduler().WaitingTasks() >= waiting+int64(n) }, "receivers parked")
			}
			k := round % 7
			for i := 0; i < k; i++ {
				require.NoError(t, m.Send(ctx, ch, vmloop.I64(int64(i))))
			}
			require.NoError(t, m.CloseChan(ch))
			seen := map[int64]bool{}
			ends := 0
			for _, task := range ts {
				o := testkit.Await(t, task)
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				v := o.Value.Int()
				if v == -1 {
					ends++
					continue
				}
				require.False(t, seen[v], "value %d received twice", v)
				require.True(t, v >= 0 && v < int64(k), "value %d", v)
				seen[v] = true
			}
			require.Len(t, seen, k, "round %d", round)
			require.Equal(t, n-k, ends)
		}
		testkit.WaitFor(t, func() bool { return b.Scheduler().WaitingTasks() == 0 }, func() string {
			return fmt.Sprintf("%d tasks still parked", b.Scheduler().WaitingTasks())
		})
	})
}

// drain receives every message of a closed channel.
func drain(t *testing.T, m *bus.Member, ch vmloop.Value) []int64 {
	t.Helper()
	var got []int64
	for {
		v, err := m.Recv(context.Background(), ch)
		if err != nil {
			require.ErrorIs(t, err, bus.ErrChanClosed)
			return got
		}
		got = append(got, v.Int())
	}
}

// TestChanCancelledReceiverGivesBack: a message handed to a parked
// receiver that is cancelled before it resumes goes back to the channel
// (the dispatcher's Abandon), so the next receiver gets it: a cancel never
// loses a message. The receiver is kept from resuming by a task that
// holds the only worker for a long slice; a round in which it resumed
// before the cancel anyway is inconclusive and retried.
func TestChanCancelledReceiverGivesBack(t *testing.T) {
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "t", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel(), ReductionLimit: 10_000_000}, bus.CapAll)
	})
	p := testkit.Prog(t, b, wakeProg+`
.func hog() -> void
loop:
  jmp loop
.end
`)
	ctx := context.Background()
	conclusive := 0
	for round := 0; round < 20 && conclusive < 3; round++ {
		ch, err := m.NewChan(vmloop.KindI64, 0)
		require.NoError(t, err)
		waiting := b.Scheduler().WaitingTasks()
		r := testkit.Spawn(t, m, p, "one_recv", ch)
		testkit.WaitFor(t, func() bool { return b.Scheduler().WaitingTasks() > waiting }, "receiver parked")
		hog := testkit.Spawn(t, m, p, "hog")
		testkit.WaitFor(t, func() bool { return hog.State() == sched.Running }, "hog running")
		require.NoError(t, m.Send(ctx, ch, vmloop.I64(77))) // handed to the parked receiver
		require.NoError(t, m.Cancel(r))
		o := testkit.Await(t, r)
		require.NoError(t, m.Cancel(hog))
		testkit.Await(t, hog)
		if o.Kind == sched.Success {
			require.Equal(t, int64(77), o.Value.Int())
			continue // it resumed before the cancel: took the message
		}
		require.Equal(t, sched.Cancelled, o.Kind, "%v", o)
		conclusive++
		n, err := bus.ChanLen(ch)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the cancelled receiver's message is back in the channel")
		v, err := m.Recv(ctx, ch)
		require.NoError(t, err)
		require.Equal(t, int64(77), v.Int())
	}
	require.Positive(t, conclusive, "the receiver always resumed before its cancel")
}
