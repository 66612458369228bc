package sched_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// firstStressSrc: pairs of tasks that hand a token back and forth over
// events and over rendezvous channels, and spawn + join children on the
// way, so that waits run the lifo slot's task first all the time. pair
// returns the rounds it made; each round checks the value the other side
// sent back.
const firstStressSrc = `
.abi 1.5
.func pair(n:i64) -> i64
  .local ping:ref, pong:ref, a:ref, b:ref, z:i64, t:ref, u:ref, i:i64, v:i64, w:i64
  evnew ping
  evnew pong
  const z, 0
  intr  a, chan.new_i64, z
  intr  b, chan.new_i64, z
  spawn t, partner, ping, pong, a, b, n
  const i, 0
l:
  jge      i, n, d
  evsignal ping
  evwait   pong
  intr     _, chan.send_i64, a, i
  intr     v, chan.recv_i64, b
  subi     v, v, 1
  jne      v, i, bad
  spawn    u, child, i
  joini    w, u
  free     u
  jne      w, i, bad
  addi     i, i, 1
  jmp      l
d:
  joini v, t
  jne   v, n, bad
  ret   i
bad:
  const v, -1
  ret   v
.end
.func partner(ping:ref, pong:ref, a:ref, b:ref, n:i64) -> i64
  .local i:i64, v:i64
  const i, 0
l:
  jge      i, n, d
  evwait   ping
  evsignal pong
  intr     v, chan.recv_i64, a
  addi     v, v, 1
  intr     _, chan.send_i64, b, v
  addi     i, i, 1
  jmp      l
d:
  ret i
.end
.func child(x:i64) -> i64
  ret x
.end`

// TestRunFirstStress: many pairs on several workers, with the host
// cancelling some of them at random moments and signalling outside
// wakes meanwhile. Every pair that is not cancelled makes all its
// rounds with every value right; a cancelled one ends Cancelled; nothing
// hangs, and the runtime's shutdown (which cancels the partners of the
// cancelled pairs) leaves no task or goroutine (testkit checks at
// cleanup).
func TestRunFirstStress(t *testing.T) {
	pairs, rounds := 64, 3000
	if testing.Short() || raceEnabled {
		pairs, rounds = 16, 500
	}
	testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
		// Forced: a cancelled pair leaves its partner waiting, which the
		// runtime's shutdown cancels.
		rt := testkit.ForcedRuntime(t, jade.Options{Workers: workers})
		p := testkit.Load(t, rt, firstStressSrc)
		tasks := make([]*jade.Task, pairs)
		for i := range tasks {
			var err error
			tasks[i], err = rt.Spawn(p, "pair", vmloop.I64(int64(rounds)))
			require.NoError(t, err)
		}
		// Outside wakes: an event nobody waits on, signalled from the
		// host, kicks busy workers (kickOne) while pairs run first.
		ev := rt.NewEvent()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Microsecond):
					_ = rt.Signal(ev)
				}
			}
		}()
		cancelled := map[int]bool{}
		for _, i := range rand.Perm(pairs)[:pairs/4] {
			time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
			require.NoError(t, tasks[i].Cancel())
			cancelled[i] = true
		}
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Patience)
		defer cancel()
		done := 0
		for i, task := range tasks {
			o, err := task.Wait(ctx)
			require.NoError(t, err, "pair %d", i)
			if o.Kind == sched.Cancelled {
				require.True(t, cancelled[i], "pair %d cancelled without a cancel", i)
				continue
			}
			require.Equal(t, sched.Success, o.Kind, "pair %d: %v", i, o)
			require.Equal(t, int64(rounds), o.Value.Int(), "pair %d", i)
			done++
		}
		close(stop)
		wg.Wait()
		var taken, joins uint64
		for _, w := range rt.Observe().Metrics().Workers {
			taken += w.WaitsTaken
			joins += w.JoinsFirst
		}
		t.Logf("%d pairs of %d rounds at %d workers: %d completed, %d waits taken in place, %d joins ran first", pairs, rounds, workers, done, taken, joins)
		require.Greater(t, taken, uint64(0))
		require.Greater(t, joins, uint64(0))
	})
}
