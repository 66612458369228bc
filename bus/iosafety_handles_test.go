//go:build linux

package bus_test

import (
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestCloseAtLimitClosesTheDescriptor: a net.close whose Close operation
// cannot be submitted (the engine's inFlightIO limit is taken by another
// task's read) still closes the descriptor: the peer reads EOF at once.
func TestCloseAtLimitClosesTheDescriptor(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{InFlightIO: 1})
		p := testkit.Prog(t, b, safetyProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		task, err := m.Spawn(nil, p, "close_at_limit", vmloop.Str(ln.Addr().String()))
		require.NoError(t, err)
		first, err := ln.Accept()
		require.NoError(t, err)
		defer first.Close()
		second, err := ln.Accept()
		require.NoError(t, err)
		defer second.Close()
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "close_at_limit: %v", o)
		first.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := first.Read(make([]byte, 1))
		require.Equal(t, 0, n)
		require.ErrorIs(t, err, io.EOF, "the closed connection's peer")
		second.Close() // the reader sees EOF and ends
	})
}

// TestPassedHandlesLeaveNothingBehind: a long-lived task that opens
// handles and passes each to a child (the accept loop of a server) keeps
// no state per handle: its heap after GC does not grow with the cycles.
// Every handle used to leave an end hook behind on its maker.
func TestPassedHandlesLeaveNothingBehind(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		// objects returns the heap's live objects while a churn task of n
		// cycles, done with them, is still alive.
		objects := func(n int64) uint64 {
			closes := b.Scheduler().IOStats().Ops[evpoll.Close]
			task, err := m.Spawn(nil, p, "churn", vmloop.Str("/dev/null"), vmloop.I64(n))
			require.NoError(t, err)
			deadline := time.Now().Add(60 * time.Second)
			for b.Scheduler().IOStats().Ops[evpoll.Close]-closes < uint64(n) || task.State() != sched.Waiting {
				require.True(t, time.Now().Before(deadline), "churn of %d never finished", n)
				time.Sleep(2 * time.Millisecond)
			}
			var ms runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			m.Cancel(task)
			require.Equal(t, sched.Cancelled, testkit.Await(t, task).Kind)
			return ms.HeapObjects
		}
		// 40,000 more handles may leave fewer than 4,000 objects (a tenth
		// of an object a handle); under the race detector, which makes
		// each cycle some ten times slower, 10,000 more and 1,000
		// objects: the same bound a handle.
		more, slack := int64(40_000), int64(4_000)
		if raceEnabled {
			more, slack = 10_000, 1_000
		}
		objects(2_000) // pools and tables warm
		small := objects(2_000)
		large := objects(2_000 + more)
		require.Lessf(t, int64(large)-int64(small), slack,
			"heap objects grew from %d to %d over %d more handles", small, large, more)
	})
}

// TestPassedHandleIsStaleInTheParent: a handle passed at spawn belongs
// to the child; the parent's copy is refused with a clear error, for a
// write and a close on a socket and for a file (the parent used to write
// through it until the child closed the file).
func TestPassedHandleIsStaleInTheParent(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		for _, doclose := range []int64{0, 1} {
			task, err := m.Spawn(nil, p, "stale_conn", vmloop.Str(ln.Addr().String()), vmloop.I64(doclose))
			require.NoError(t, err)
			peer, err := ln.Accept()
			require.NoError(t, err)
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "stale_conn: %v", o)
			require.Regexp(t, `^net\.(write|close): conn\(fd \d+\) belongs to task \d+, to which it was passed; only its owner may use it$`, o.Value.String())
			// The child was cancelled: its end closed the connection.
			peer.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = peer.Read(make([]byte, 1))
			require.ErrorIs(t, err, io.EOF, "the child's connection after its end")
			peer.Close()
		}
		o := testkit.SpawnAwait(t, m, p, "stale_file", vmloop.Str("/dev/null"))
		require.Equal(t, sched.Success, o.Kind, "stale_file: %v", o)
		require.Regexp(t, `^file\.write: file\(fd \d+\) belongs to task \d+`, o.Value.String())
		require.Eventually(t, func() bool { return m.Engine().InFlightIO() == 0 }, 5*time.Second, time.Millisecond)
	})
}

// TestCancelAfterAcceptClosesTheConnection: an accept whose completion
// won the task's wake, with the task cancelled before it resumed, closes
// the accepted descriptor (it used to leak: the peer never saw EOF).
func TestCancelAfterAcceptClosesTheConnection(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := oneWorkerBus(t, nil)
		p := testkit.Prog(t, b, safetyProg+abandonHog)
		landed := 0
		for range 5 {
			addr := testkit.FreeAddr(t)
			acc, err := m.Spawn(nil, p, "accept_one", vmloop.Str(addr))
			require.NoError(t, err)
			waitListening(t, addr) // its connection is accepted and closed
			waitState(t, acc, sched.Waiting)
			hog, err := m.Spawn(nil, p, "hog") // the worker reaps the accept but runs the hog first
			require.NoError(t, err)
			waitState(t, hog, sched.Running)
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			ok := assertEventually(func() bool { return acc.State() == sched.Runnable }, 2*time.Second)
			require.NoError(t, m.Cancel(acc))
			o := testkit.Await(t, acc)
			m.Cancel(hog)
			testkit.Await(t, hog)
			if ok && o.Kind == sched.Cancelled {
				landed++
			}
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, err = c.Read(make([]byte, 1))
			c.Close()
			// EOF: accepted, then closed; a reset: never accepted, and the
			// listener closed with it in its backlog. A leak times out.
			if !errors.Is(err, syscall.ECONNRESET) {
				require.ErrorIs(t, err, io.EOF, "the accepted connection's peer (task %v)", o)
			}
		}
		require.NotZero(t, landed, "no cancel landed between the accept's wake and its resume")
	})
}

func assertEventually(cond func() bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Microsecond) {
		if cond() {
			return true
		}
	}
	return false
}
