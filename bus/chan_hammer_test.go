package bus_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// hammerProg: senders send base..base+n-1 on ch, every every-th send
// under a time.timeout of tmo ns, and write to the ledger what became of
// each value (v: sent; -v-1: not sent, a TimeoutError or a ClosedError,
// after which the sender stops). Receivers take from ch, every every-th
// receive under a timeout, and forward each value to out, until ch is
// closed and drained.
const hammerProg = `
.abi 1.5
.func sender(ch:ref, ledger:ref, base:i64, n:i64, tmo:i64, every:i64) -> void
  .local i:i64, v:i64, e:ref, k:ref, want:ref, eq:i64, neg:i64, r:i64
  const i, 0
  const want, "ClosedError"
loop:
  jge   i, n, done
  add   v, base, i
  rem   r, i, every
  jnz   r, send
  intr  _, time.timeout, tmo
send:
  .try  sb, se, failed, e
sb:
  intr  _, chan.send_i64, ch, v
se:
  intr  _, chan.send_i64, ledger, v
  addi  i, i, 1
  jmp   loop
failed:
  neg   neg, v
  subi  neg, neg, 1
  intr  _, chan.send_i64, ledger, neg
  errkind k, e
  seq   eq, k, want
  jnz   eq, done
  addi  i, i, 1
  jmp   loop
done:
  retv
.end

.func receiver(ch:ref, out:ref, tmo:i64, every:i64) -> i64
  .local n:i64, v:i64, e:ref, k:ref, want:ref, eq:i64, r:i64
  const n, 0
  const want, "ClosedError"
loop:
  rem   r, n, every
  jnz   r, recv
  intr  _, time.timeout, tmo
recv:
  .try  rb, re, failed, e
rb:
  intr  v, chan.recv_i64, ch
re:
  intr  _, chan.send_i64, out, v
  addi  n, n, 1
  jmp   loop
failed:
  errkind k, e
  seq   eq, k, want
  jnz   eq, done
  addi  n, n, 1
  jmp   loop
done:
  ret   n
.end
`

// hammerTotal is the number of values one hammer run sends
// (JADE_CHAN_HAMMER overrides it: make hammer-style runs use 1M).
func hammerTotal() int {
	if s := os.Getenv("JADE_CHAN_HAMMER"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	if raceEnabled || testing.Short() {
		return 6_000
	}
	return 60_000
}

// TestChanExactlyOnce is the exactly-once hammer: values go through one
// channel from 1, 8 or 64 sending tasks to as many receiving tasks, at 1,
// 2, 4 and 8 workers, with random timeouts on both sides, random cancels
// of senders, and a close that races the sends. Every value a sender was
// told was sent is received exactly once; every value it was told was
// not sent is never received; a value whose sender was cancelled in the
// middle of its send is received at most once. Afterwards every byte the
// messages held is back in the engine's budget.
func TestChanExactlyOnce(t *testing.T) {
	workers := []int{1, 2, 4, 8}
	parties := []int{1, 8, 64}
	if raceEnabled {
		workers = []int{2, 4}
		parties = []int{1, 8}
	}
	testkit.Workers(t, workers, func(t *testing.T, w int) {
		for _, np := range parties {
			for _, capacity := range []int{0, 1, 64} {
				t.Run(fmt.Sprintf("parties=%d/cap=%d", np, capacity), func(t *testing.T) {
					hammer(t, w, np, capacity, hammerTotal())
				})
			}
		}
	})
}

func hammer(t *testing.T, workers, parties, capacity, total int) {
	b, m := timeBus(t, workers, sched.ResourceLimits{})
	p := testkit.Prog(t, b, hammerProg)
	rng := rand.New(rand.NewPCG(uint64(workers*1000+parties), uint64(capacity)))
	ctx := context.Background()
	ch, err := m.NewChan(vmloop.KindI64, capacity)
	require.NoError(t, err)
	ledger, err := m.NewChan(vmloop.KindI64, 4*total)
	require.NoError(t, err)
	out, err := m.NewChan(vmloop.KindI64, 4*total)
	require.NoError(t, err)
	before := m.Engine().MemoryBytes()

	per := total / parties
	tmos := []int64{0, 1_000, 20_000, 200_000}
	var recvs, sends []*sched.Task
	for i := 0; i < parties; i++ {
		recvs = append(recvs, testkit.Spawn(t, m, p, "receiver", ch, out,
			vmloop.I64(tmos[rng.IntN(len(tmos))]), vmloop.I64(int64(3+rng.IntN(5)))))
	}
	for i := 0; i < parties; i++ {
		sends = append(sends, testkit.Spawn(t, m, p, "sender", ch, ledger, vmloop.I64(int64(i*per)), vmloop.I64(int64(per)),
			vmloop.I64(tmos[rng.IntN(len(tmos))]), vmloop.I64(int64(3+rng.IntN(5)))))
	}

	// The ledger is read as it fills; at half the channel is closed under
	// the senders still sending. Meanwhile some senders are cancelled.
	status := map[int64]bool{} // value -> sent
	var mu sync.Mutex
	ledgerDone := make(chan error, 1)
	closeAt := total / 2
	go func() {
		closed := false
		for {
			v, err := m.Recv(ctx, ledger)
			if err != nil {
				if !closed {
					_ = m.CloseChan(ch)
				}
				if errors.Is(err, bus.ErrChanClosed) {
					err = nil
				}
				ledgerDone <- err
				return
			}
			x := v.Int()
			mu.Lock()
			if x >= 0 {
				status[x] = true
			} else {
				status[-x-1] = false
			}
			n := len(status)
			mu.Unlock()
			if !closed && n >= closeAt {
				_ = m.CloseChan(ch) // the test may have closed it first
				closed = true
			}
		}
	}()
	cancelled := map[*sched.Task]bool{}
	for i := 0; i < parties/8; i++ { // a lone sender is never cancelled
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
		s := sends[rng.IntN(len(sends))]
		require.NoError(t, m.Cancel(s))
		cancelled[s] = true
	}
	for _, s := range sends {
		o := testkit.Await(t, s)
		if cancelled[s] && o.Kind == sched.Cancelled {
			continue
		}
		require.Equal(t, sched.Success, o.Kind, "sender: %v", o)
	}
	// Every sender has ended: the channel closes (if the ledger never
	// reached the mark), the receivers drain it and end.
	_ = m.CloseChan(ch)
	for _, r := range recvs {
		o := testkit.Await(t, r)
		require.Equal(t, sched.Success, o.Kind, "receiver: %v", o)
	}
	require.NoError(t, m.CloseChan(ledger))
	require.NoError(t, <-ledgerDone)
	require.NoError(t, m.CloseChan(out))
	got := map[int64]int{}
	for {
		v, err := m.Recv(ctx, out)
		if err != nil {
			require.ErrorIs(t, err, bus.ErrChanClosed)
			break
		}
		got[v.Int()]++
	}
	sent, notSent := 0, 0
	for v, n := range got {
		require.True(t, v >= 0 && v < int64(parties*per), "value %d was never sent", v)
		require.Equal(t, 1, n, "value %d received %d times", v, n)
		if s, ok := status[v]; ok {
			require.True(t, s, "value %d received but its sender was told it was not sent", v)
		}
	}
	for v, s := range status {
		if s {
			sent++
			require.Equal(t, 1, got[v], "value %d was sent but received %d times", v, got[v])
		} else {
			notSent++
		}
	}
	t.Logf("%d values: %d sent, %d not sent (timeout or closed), %d received, %d senders cancelled", parties*per, sent, notSent, len(got), len(cancelled))
	require.Greater(t, sent, 0)

	for _, c := range []vmloop.Value{ch, ledger, out} {
		held, err := bus.ChanHeldBytes(c)
		require.NoError(t, err)
		require.Zero(t, held, "bytes still held by a drained channel")
	}
	testkit.WaitFor(t, func() bool { return m.Engine().MemoryBytes() <= before },
		"the engine's memory back to %d bytes", before)
}
