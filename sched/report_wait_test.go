package sched_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// waitsProg leaves one task waiting in each kind of wait: main joins
// on_event, which waits for an event under a timeout; sleeper sleeps;
// blocker is in a blocking host call; acceptor accepts one connection,
// hands it to reader (which reads) and waits in a second accept. Each
// waiting instruction carries a "; wait:NAME" marker for its line.
const waitsProg = `
.abi 1.3
.func main(addr:ref) -> i64
  .local l:ref, ready:ref, j:ref, s:ref, h:ref, a:ref, v:i64
  intr  l, net.listen, addr
  evnew ready
  spawn j, on_event, ready
  spawn s, sleeper
  spawn h, blocker
  spawn a, acceptor, l
  joini v, j                  ; wait:join
  ret   v
.end
.func on_event(ready:ref) -> i64
  .local d:i64, z:i64
  const d, 120000000000
  intr  _, time.timeout, d
  evwait ready                ; wait:event
  const z, 0
  ret   z
.end
.func sleeper() -> i64
  .local d:i64, z:i64
  const d, 90000000000
  intr  _, time.sleep, d      ; wait:sleep
  const z, 0
  ret   z
.end
.func blocker() -> i64
  .local v:i64
  intr  v, test.block         ; wait:host
  ret   v
.end
.func acceptor(l:ref) -> i64
  .local c:ref, t:ref, z:i64
  intr  c, net.accept, l
  spawn t, reader, c
  intr  c, net.accept, l      ; wait:accept
  const z, 0
  ret   z
.end
.func reader(c:ref) -> i64
  .local buf:ref, n:i64, z:i64, sz:i64
  const sz, 16
  bnew  buf, sz
  const z, 0
  intr  n, net.read, c, buf, z ; wait:read
  ret   n
.end
`

// markerLine returns the source line of waitsProg marked "; wait:name".
func markerLine(t *testing.T, name string) int {
	for i, l := range strings.Split(waitsProg, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), "; wait:"+name) {
			return i + 1
		}
	}
	t.Fatalf("no marker %s", name)
	return 0
}

// TestReportsNameWhatIsAwaited: a task dump (TasksWithStacks) says of
// every Waiting task where it waits (file:line of the request) and what
// for: the joined task, the event's register, the sleep's end, a
// blocking host call, the listener's and the connection's addresses,
// and the timeout's deadline. Tasks (no stop of the world) says where
// and in which intrinsic, and Detail completes its reports. On both
// backends.
func TestReportsNameWhatIsAwaited(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		rt := testkit.ForcedRuntime(t, jade.Options{Workers: 2})
		require.NoError(t, rt.RegisterBlockingIntrinsic("test.block", nil, vmloop.TI64, 0,
			func(ctx context.Context, _ []vmloop.Value) (vmloop.Value, error) {
				<-ctx.Done()
				return vmloop.I64(0), ctx.Err()
			}))
		p := testkit.Load(t, rt, waitsProg)
		addr := testkit.FreeAddr(t)
		_, err := rt.Spawn(p, "main", vmloop.Str(addr))
		require.NoError(t, err)
		var conn net.Conn
		testkit.WaitFor(t, func() bool {
			conn, err = net.Dial("tcp", addr)
			return err == nil
		}, "dial %s", addr)
		t.Cleanup(func() { conn.Close() })

		byFunc := func(rs []sched.TaskReport) map[string]sched.TaskReport {
			m := map[string]sched.TaskReport{}
			for _, r := range rs {
				if r.State == sched.Waiting {
					m[r.Func] = r
				}
			}
			return m
		}
		var ws map[string]sched.TaskReport
		testkit.WaitFor(t, func() bool {
			rs, err := hostbus.Scheduler(rt).TasksWithStacks(10 * time.Second)
			require.NoError(t, err)
			ws = byFunc(rs)
			return len(ws) == 6 && ws["acceptor"].Line == markerLine(t, "accept")
		}, "six tasks waiting")
		file := t.Name() + ".jasm"
		for fn, want := range map[string]struct{ op, kind, marker string }{
			"main":     {"task.join_i64", sched.WaitJoin, "join"},
			"on_event": {"event.wait", sched.WaitEvent, "event"},
			"sleeper":  {"time.sleep", sched.WaitTimer, "sleep"},
			"blocker":  {"test.block", sched.WaitHost, "host"},
			"acceptor": {"net.accept", sched.WaitIO, "accept"},
			"reader":   {"net.read", sched.WaitIO, "read"},
		} {
			r := ws[fn]
			require.NotNil(t, r.Wait, "%s: %v", fn, r)
			require.Equal(t, want.op, r.Wait.Op, "%s: %v", fn, r)
			require.Equal(t, want.kind, r.Wait.Kind, "%s: %v", fn, r)
			require.Equal(t, file, r.File)
			require.Equal(t, markerLine(t, want.marker), r.Line, "%s: %v", fn, r)
			require.Contains(t, r.String(), fmt.Sprintf("Waiting at %s:%d (%s) in %s", file, r.Line, fn, want.op))
		}
		t.Log(ws["reader"].String())
		joined := ws["on_event"].ID
		require.Equal(t, joined, ws["main"].Wait.Task)
		require.Equal(t, fmt.Sprintf("task %d", joined), ws["main"].Wait.For)
		require.Equal(t, "event ready", ws["on_event"].Wait.For)
		require.True(t, ws["on_event"].Wait.Timeout)
		require.Greater(t, ws["on_event"].Wait.In, 60*time.Second)
		require.LessOrEqual(t, ws["on_event"].Wait.In, 120*time.Second)
		require.False(t, ws["sleeper"].Wait.Timeout)
		require.Greater(t, ws["sleeper"].Wait.In, 30*time.Second)
		require.LessOrEqual(t, ws["sleeper"].Wait.In, 90*time.Second)
		require.Equal(t, "a blocking host call", ws["blocker"].Wait.For)
		require.Contains(t, ws["acceptor"].Wait.For, "listener fd ")
		require.Equal(t, addr, ws["acceptor"].Wait.Local)
		require.Contains(t, ws["reader"].Wait.For, "socket fd ")
		require.Equal(t, addr, ws["reader"].Wait.Local)
		require.Equal(t, conn.LocalAddr().String(), ws["reader"].Wait.Peer)
		require.Contains(t, ws["reader"].String(), "(local "+addr+", peer "+conn.LocalAddr().String()+")")

		// Without stopping the world: where, and in what.
		all := rt.Observe().Tasks()
		plain := byFunc(all)
		require.Len(t, plain, 6)
		for fn, r := range plain {
			require.Equal(t, ws[fn].Line, r.Line, "%s: %v", fn, r)
			require.NotNil(t, r.Wait, fn)
			require.Equal(t, ws[fn].Wait.Op, r.Wait.Op, fn)
			require.Equal(t, ws[fn].Wait.Kind, r.Wait.Kind, fn)
			require.Empty(t, r.Wait.Peer, fn)
		}
		// Detail completes the reports it is asked for (a drain report's).
		require.NoError(t, hostbus.Scheduler(rt).Detail(all, len(all), 10*time.Second))
		detailed := byFunc(all)
		require.Equal(t, ws["reader"].Wait.Peer, detailed["reader"].Wait.Peer)
		require.Equal(t, ws["main"].Wait.Task, detailed["main"].Wait.Task)
	})
}

// TestJoinAfterTimedWaitHasNoTimeout: a join that runs its target first
// and then waits (the join's path without timedWait) ends the deadline
// of the task's last timed wait as timedWait does, so a task dump does
// not report a timeout on a join that has none.
func TestJoinAfterTimedWaitHasNoTimeout(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p := testkit.Load(t, rt, `
.func main(go:ref, gate:ref) -> i64
  .local d:i64, j:ref, v:i64
  const d, 60000000000
  intr  _, time.timeout, d
  evwait go
  spawn j, child, gate
  joini v, j
  ret   v
.end
.func child(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 7
  ret   z
.end`)
	goEv, gate := rt.NewEvent(), rt.NewEvent()
	task, err := rt.Spawn(p, "main", goEv, gate)
	require.NoError(t, err)
	waitingIn := func(op string) *sched.TaskReport {
		var found *sched.TaskReport
		testkit.WaitFor(t, func() bool {
			rs, err := hostbus.Scheduler(rt).TasksWithStacks(10 * time.Second)
			require.NoError(t, err)
			for _, r := range rs {
				if r.Func == "main" && r.State == sched.Waiting && r.Wait != nil && r.Wait.Op == op {
					found = &r
					return true
				}
			}
			return false
		}, "main waiting in %s", op)
		return found
	}
	r := waitingIn("event.wait")
	require.True(t, r.Wait.Timeout, "the timed wait: %v", r)
	require.NoError(t, rt.Signal(goEv))
	r = waitingIn("task.join_i64")
	require.False(t, r.Wait.Timeout, "a join with no timeout: %v", r)
	require.NoError(t, rt.Signal(gate))
	o, err := task.Wait(t.Context())
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	require.Equal(t, int64(7), o.Value.Int())
}
