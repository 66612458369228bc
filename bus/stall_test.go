//go:build linux

package bus_test

import (
	"net"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// stallProg: each waiter records its thread (host.where), spawns staller
// — into its worker's lifo slot, so it runs there next, once the waiter
// has suspended — and waits d ns on that worker's timer wheel: a sleep, an
// evwait that its time.timeout ends, or a read of a connection whose peer
// never writes, under a time.timeout. staller blocks its worker's thread
// in host.stall. host.woke records the waiter's lateness (ns past the
// instant its wait began plus d) and its thread; the waiter returns the
// kind of error that ended its wait, or "none".
const stallProg = `
.abi 1.3
.func sleeper(d:i64) -> ref
  .local c:ref, t0:i64, t1:i64, s:ref
  intr _, host.where
  spawn c, staller
  intr t0, time.now
  add  t0, t0, d
  intr _, time.sleep_until, t0
  intr t1, time.now
  sub  t1, t1, t0
  intr _, host.woke, t1
  const s, "none"
  ret  s
.end
.func waiter(d:i64) -> ref
  .local c:ref, ev:ref, t0:i64, t1:i64, e:ref, s:ref
  evnew ev
  intr _, host.where
  spawn c, staller
  intr t0, time.now
  add  t0, t0, d
  intr _, time.timeout, d
  .try b, x, h, e
b:
  evwait ev
x:
  const s, "none"
  ret  s
h:
  intr t1, time.now
  sub  t1, t1, t0
  intr _, host.woke, t1
  errkind s, e
  ret  s
.end
.func reader(addr:ref, d:i64) -> ref
  .local c:ref, buf:ref, z:i64, n:i64, sz:i64, ch:ref, t0:i64, t1:i64, e:ref, s:ref
  intr c, net.connect, addr
  const sz, 16
  bnew buf, sz
  const z, 0
  intr _, host.where
  spawn ch, staller
  intr t0, time.now
  add  t0, t0, d
  intr _, time.timeout, d
  .try b, x, h, e
b:
  intr n, net.read, c, buf, z
x:
  const s, "none"
  ret  s
h:
  intr t1, time.now
  sub  t1, t1, t0
  intr _, host.woke, t1
  intr _, net.close, c
  errkind s, e
  ret  s
.end
.func staller() -> void
  intr _, host.stall
  retv
.end
`

// stallFor is how long host.stall blocks its worker's thread; stallWait
// is how long after its start a waiter's timer is due.
const (
	stallFor  = 50 * time.Millisecond
	stallWait = 5 * time.Millisecond
)

// stallProbe is what one round's host intrinsics saw.
type stallProbe struct {
	mu                      sync.Mutex
	armTid, stallTid, woTid int
	late                    time.Duration
	armed, stallStart       time.Time
	woke, stallEnd          time.Time
	stalled                 chan struct{}
}

// stallBus starts a bus of n workers with host.where, host.stall and
// host.woke reporting to pr.
func stallBus(t *testing.T, n int, pr *stallProbe) (*bus.Bus, *bus.Member) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: n}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "stall", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
		require.NoError(t, b.RegisterIntrinsic("host.where", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
			pr.mu.Lock()
			pr.armTid, pr.armed = unix.Gettid(), time.Now()
			pr.mu.Unlock()
			return vmloop.Void(), nil
		}))
		// Registered as non-blocking, and blocks its worker's thread.
		require.NoError(t, b.RegisterIntrinsic("host.stall", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
			tid, start := unix.Gettid(), time.Now()
			time.Sleep(stallFor)
			pr.mu.Lock()
			pr.stallTid, pr.stallStart, pr.stallEnd = tid, start, time.Now()
			pr.mu.Unlock()
			close(pr.stalled)
			return vmloop.Void(), nil
		}))
		require.NoError(t, b.RegisterIntrinsic("host.woke", []vmloop.Type{vmloop.TI64}, vmloop.TVoid, 0, func(c *bus.Call) (vmloop.Value, error) {
			pr.mu.Lock()
			pr.woTid, pr.woke, pr.late = unix.Gettid(), time.Now(), time.Duration(c.Args()[0].Int())
			pr.mu.Unlock()
			return vmloop.Void(), nil
		}))
	})
	return b, m
}

// TestStalledWorkersTimersFireElsewhere: a task waits on worker A's timer
// wheel and A's thread is then blocked for 50 ms by a host intrinsic
// registered as non-blocking. A sleep, and an evwait's time.timeout, end
// on another worker before the stall ends, their median lateness under a
// tenth of the stall (stealAfter, 200 µs, plus a wake-up on a quiet
// machine: the distribution is logged). A read's time.timeout is fired
// elsewhere too and handed back to A, whose backend holds the read: A
// cancels it when it comes back (never earlier), and the read throws
// TimeoutError. Rounds whose stall overran (the whole process held up)
// are not judged, and a tenth of the others may miss (a thief waiting
// for a CPU on a machine loaded far beyond its CPUs). Before other
// workers fired a stalled worker's timers, every round missed.
func TestStalledWorkersTimersFireElsewhere(t *testing.T) {
	rounds := 50 // every round missed before the rescue: 50 decide it
	if testing.Short() || raceEnabled {
		rounds = 20 // the race detector finds nothing more in 50 rounds of 50 ms stalls
	}
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{2, 4}, func(t *testing.T, workers int) {
			for _, fn := range []string{"sleeper", "waiter", "reader"} {
				t.Run(fn, func(t *testing.T) { stallRounds(t, workers, fn, rounds) })
			}
		})
	})
}

// stallRounds runs rounds of fn on a bus of workers workers and checks
// each round in which the staller blocked the waiter's own worker.
func stallRounds(t *testing.T, workers int, fn string, rounds int) {
	pr := &stallProbe{}
	b, m := stallBus(t, workers, pr)
	p := testkit.Prog(t, b, stallProg)
	var addr string
	if fn == "reader" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close() // never writes
			}
		}()
		addr = ln.Addr().String()
	}
	var lates []time.Duration
	valid, frozen, missed := 0, 0, 0
	for range rounds {
		pr.stalled = make(chan struct{})
		args := []vmloop.Value{vmloop.I64(int64(stallWait))}
		if fn == "reader" {
			args = []vmloop.Value{vmloop.Str(addr), vmloop.I64(int64(stallWait))}
		}
		_, routedBefore := b.Scheduler().StolenTimers()
		o := testkit.SpawnAwait(t, m, p, fn, args...)
		select {
		case <-pr.stalled:
		case <-time.After(10 * time.Second):
			t.Fatal("the stall did not end")
		}
		require.Equal(t, sched.Success, o.Kind, "%s: %v", fn, o)
		if fn != "sleeper" {
			require.Equal(t, vmloop.ErrKindTimeout, o.Value.String(), "%s", fn)
		}
		pr.mu.Lock()
		armTid, stallTid, woTid, late, woke, stallEnd := pr.armTid, pr.stallTid, pr.woTid, pr.late, pr.woke, pr.stallEnd
		armed, stallStart := pr.armed, pr.stallStart
		pr.mu.Unlock()
		if armTid != stallTid || !stallStart.Before(armed.Add(stallWait-time.Millisecond)) {
			// The staller ran on another worker, or began after the
			// deadline (its worker held up before it: a loaded machine).
			continue
		}
		valid++
		lates = append(lates, late)
		if fn == "reader" {
			// The read lives on the stalled worker's backend: only it ends
			// it, after the stall.
			require.False(t, woke.Before(stallEnd), "a read timed out before its backend's worker came back")
		}
		if stallEnd.Sub(stallStart) > stallFor+stallFor/5 {
			// The stall overran: the whole process was held up (a loaded
			// machine, a CPU quota's throttling), the thief with it.
			frozen++
			continue
		}
		if fn == "reader" {
			if _, routed := b.Scheduler().StolenTimers(); routed != routedBefore+1 {
				missed++
				t.Logf("round %d: the read's timeout was not fired elsewhere (%v late)", valid, late)
			}
			continue
		}
		if woTid == stallTid || !woke.Before(stallEnd) {
			missed++
			t.Logf("round %d: %s woke %v late, %v after the stall ended, on the stalled worker: %v",
				valid, fn, late, woke.Sub(stallEnd), woTid == stallTid)
		}
	}
	// A thief's thread may itself wait for a CPU for tens of ms on a
	// machine loaded far beyond its CPUs: a few rounds may miss, most may
	// not (before thieves, every round missed).
	require.LessOrEqual(t, missed, valid/10, "rounds in which no other worker fired the timer in time")
	require.GreaterOrEqual(t, valid, rounds/2, "rounds whose staller stalled the waiter's worker in time")
	if fn == "reader" {
		testkit.WaitFor(t, func() bool { return m.Engine().InFlightIO() == 0 }, "operations in flight")
	}
	slices.Sort(lates)
	q := func(f float64) time.Duration { return lates[int(f*float64(len(lates)-1))] }
	over := len(lates) - sort.Search(len(lates), func(i int) bool { return lates[i] > time.Millisecond })
	t.Logf("%s, %d workers: %d/%d rounds stalled the waiter's worker (%d stalls overran, %d missed); lateness p50 %v p90 %v p99 %v max %v; %d over 1 ms",
		fn, workers, valid, rounds, frozen, missed, q(0.5), q(0.9), q(0.99), lates[len(lates)-1], over)
	if fn != "reader" {
		// Per round, a loaded machine may hold every thread of the process
		// (a CPU quota's throttling: the stall then ends late too); the
		// median may not move.
		require.Less(t, q(0.5), stallFor/10, "median lateness")
	}
}

// stealRaceProg: spinner alternates short sleeps, evwaits under a short
// time.timeout and busy spells of host.spin (registered as non-blocking),
// so that a worker is often late at its slice boundaries while its peers
// fire its timers.
const stealRaceProg = `
.abi 1.3
.func spinner(n:i64, d:i64) -> i64
  .local i:i64, ev:ref, e:ref, k:i64
  evnew ev
  const i, 0
  const k, 0
l:
  jge  i, n, done
  intr _, time.sleep, d
  intr _, host.spin
  intr _, time.timeout, d
  .try b, x, h, e
b:
  evwait ev
x:
  jmp  next
h:
  addi k, k, 1
next:
  addi i, i, 1
  jmp  l
done:
  ret  k
.end
`

// TestStealRacesTheOwner: workers that are late by more than the steal
// threshold keep inserting, cancelling and firing timers while their
// peers fire them (run it with -race: the hold word is all that keeps a
// thief's Advance off the owner's shards). Every sleep ends and every
// evwait times out exactly once.
func TestStealRacesTheOwner(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		var m *bus.Member
		b := testkit.Bus(t, bus.Config{Workers: 3}, func(b *bus.Bus) {
			m = testkit.Engine(t, b, "race", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
			require.NoError(t, b.RegisterIntrinsic("host.spin", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
				for t0 := time.Now(); time.Since(t0) < 300*time.Microsecond; {
				}
				return vmloop.Void(), nil
			}))
		})
		p := testkit.Prog(t, b, stealRaceProg)
		const tasks, n = 8, 40
		var all []*sched.Task
		for range tasks {
			task, err := m.Spawn(nil, p, "spinner", vmloop.I64(n), vmloop.I64(int64(100*time.Microsecond)))
			require.NoError(t, err)
			all = append(all, task)
		}
		for _, task := range all {
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.EqualValues(t, n, o.Value.Int(), "evwaits that timed out")
		}
		fired, _ := b.Scheduler().StolenTimers()
		t.Logf("%d timers fired by a worker other than their owner", fired)
		require.Zero(t, m.Engine().PendingTimers())
	})
}
