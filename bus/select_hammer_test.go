package bus_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// selHammerProg: senders offer each value on three channels at once (one
// select of three send cases: exactly one may take it) and record it in
// the ledger as sent (v) or not sent (-v-1: the deadline fired, or a
// channel closed); receivers wait on the three channels at once (one
// select of three receive cases, reused) and forward what they get to
// out, until a case finds its channel closed and drained.
const selHammerProg = `
.abi 1.5
.func sender(a:ref, b:ref, c:ref, ledger:ref, base:i64, n:i64, tmo:i64) -> void
  .local s:ref, i:i64, v:i64, k:i64, e:ref, neg:i64, z:i64, one:i64, two:i64
  const z, 0
  const one, 1
  const two, 2
  intr  s, sel.new
  intr  _, sel.send_i64, s, a, base
  intr  _, sel.send_i64, s, b, base
  intr  _, sel.send_i64, s, c, base
  const i, 0
loop:
  jge   i, n, done
  add   v, base, i
  intr  _, sel.set_i64, s, z, v
  intr  _, sel.set_i64, s, one, v
  intr  _, sel.set_i64, s, two, v
  .try  wb, we, failed, e
wb:
  intr  k, sel.wait, s, tmo
we:
  jlti  k, 0, unsent
  intr  _, chan.send_i64, ledger, v
  addi  i, i, 1
  jmp   loop
unsent:
  neg   neg, v
  subi  neg, neg, 1
  intr  _, chan.send_i64, ledger, neg
  addi  i, i, 1
  jmp   loop
failed:
  neg   neg, v
  subi  neg, neg, 1
  intr  _, chan.send_i64, ledger, neg
done:
  retv
.end

.func receiver(a:ref, b:ref, c:ref, out:ref, tmo:i64) -> i64
  .local s:ref, n:i64, k:i64, v:i64, cl:i64
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.recv, s, b
  intr  _, sel.recv, s, c
  const n, 0
loop:
  intr  k, sel.wait, s, tmo
  jlti  k, 0, loop
  intr  cl, sel.closed, s
  jnz   cl, done
  intr  v, sel.value_i64, s
  intr  _, chan.send_i64, out, v
  addi  n, n, 1
  jmp   loop
done:
  ret   n
.end
`

func selHammerTotal() int {
	if raceEnabled || testing.Short() {
		return 3_000
	}
	return 30_000
}

// TestSelectExactlyOnce is the select hammer: every value is offered on
// three channels at once and each receiver waits on the three at once,
// both with random deadlines, at 1, 2, 4 and 8 workers, with random
// cancels of senders and receivers and a close of the channels racing the
// sends. Every value is received at most once; every value its sender
// was told was sent is received, except at most one per cancelled
// receiver (taken into that receiver's heap before it could forward it);
// no value its sender was told was not sent is ever received. Afterwards
// every byte the messages held is back in the engine's budget.
func TestSelectExactlyOnce(t *testing.T) {
	workers := []int{1, 2, 4, 8}
	parties := []int{1, 8, 32}
	if raceEnabled {
		workers = []int{2, 4}
		parties = []int{1, 8}
	}
	testkit.Workers(t, workers, func(t *testing.T, w int) {
		for _, np := range parties {
			for _, capacity := range []int{0, 1, 16} {
				t.Run(fmt.Sprintf("parties=%d/cap=%d", np, capacity), func(t *testing.T) {
					selHammer(t, w, np, capacity, selHammerTotal())
				})
			}
		}
	})
}

func selHammer(t *testing.T, workers, parties, capacity, total int) {
	b, m := timeBus(t, workers, sched.ResourceLimits{})
	p := testkit.Prog(t, b, selHammerProg)
	rng := rand.New(rand.NewPCG(uint64(workers*1000+parties), uint64(capacity)))
	ctx := context.Background()
	var chs []vmloop.Value
	for range 3 {
		ch, err := m.NewChan(vmloop.KindI64, capacity)
		require.NoError(t, err)
		chs = append(chs, ch)
	}
	ledger, err := m.NewChan(vmloop.KindI64, 4*total)
	require.NoError(t, err)
	out, err := m.NewChan(vmloop.KindI64, 4*total)
	require.NoError(t, err)
	before := m.Engine().MemoryBytes()

	per := total / parties
	tmos := []int64{-1, 0, 1_000, 20_000, 200_000}
	var recvs, sends []*sched.Task
	for i := 0; i < parties; i++ {
		recvs = append(recvs, testkit.Spawn(t, m, p, "receiver", chs[0], chs[1], chs[2], out, vmloop.I64(tmos[rng.IntN(len(tmos))])))
	}
	for i := 0; i < parties; i++ {
		tmo := tmos[1+rng.IntN(len(tmos)-1)] // a sender always has a deadline
		sends = append(sends, testkit.Spawn(t, m, p, "sender", chs[0], chs[1], chs[2], ledger,
			vmloop.I64(int64(i*per)), vmloop.I64(int64(per)), vmloop.I64(tmo)))
	}
	closeAll := func() {
		for _, c := range chs {
			_ = m.CloseChan(c) // the test may have closed it first
		}
	}

	status := map[int64]bool{} // value -> sent
	var mu sync.Mutex
	ledgerDone := make(chan error, 1)
	closeAt := total / 2
	go func() {
		closed := false
		for {
			v, err := m.Recv(ctx, ledger)
			if err != nil {
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
				closeAll()
				closed = true
			}
		}
	}()
	cancelled := map[*sched.Task]bool{}
	for i := 0; i < parties/4; i++ { // a lone party is never cancelled
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
		all := sends
		if i%2 == 1 {
			all = recvs
		}
		s := all[rng.IntN(len(all))]
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
	closeAll()
	lostTo := 0 // receivers cancelled
	for _, r := range recvs {
		o := testkit.Await(t, r)
		if cancelled[r] && o.Kind == sched.Cancelled {
			lostTo++
			continue
		}
		require.Equal(t, sched.Success, o.Kind, "receiver: %v", o)
	}
	require.NoError(t, m.CloseChan(ledger))
	require.NoError(t, <-ledgerDone)
	require.NoError(t, m.CloseChan(out))
	got := map[int64]int{}
	for _, c := range append(chs, out) { // what the receivers left, and what they took
		for {
			v, err := m.Recv(ctx, c)
			if err != nil {
				require.ErrorIs(t, err, bus.ErrChanClosed)
				break
			}
			got[v.Int()]++
		}
	}
	sent, notSent, missing := 0, 0, 0
	for v, n := range got {
		require.True(t, v >= 0 && v < int64(parties*per), "value %d was never sent", v)
		require.Equal(t, 1, n, "value %d received %d times", v, n)
		if s, ok := status[v]; ok {
			require.True(t, s, "value %d received but its sender was told it was not sent", v)
		}
	}
	for v, s := range status {
		if !s {
			notSent++
			continue
		}
		sent++
		if got[v] == 0 {
			missing++
		}
	}
	t.Logf("%d values: %d sent, %d not sent (deadline or closed), %d received, %d parties cancelled, %d sent values taken by cancelled receivers",
		parties*per, sent, notSent, len(got), len(cancelled), missing)
	require.LessOrEqual(t, missing, lostTo, "sent values never received")
	require.Greater(t, sent, 0)

	for _, c := range append(chs, ledger, out) {
		held, err := bus.ChanHeldBytes(c)
		require.NoError(t, err)
		require.Zero(t, held, "bytes still held by a drained channel")
	}
	// A cancelled sender's select still holds its unsent message until
	// the select is collected (its cleanup gives the charge back).
	testkit.WaitFor(t, func() bool { runtime.GC(); return m.Engine().MemoryBytes() <= before },
		"the engine's memory back to %d bytes", before)
}
