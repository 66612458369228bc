//go:build linux

package bus_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const ioProg = `
.abi 1.2
.func copyfile(src:ref, dst:ref) -> i64
  .local in:ref, out:ref, buf:ref, n:i64, total:i64, z:i64, fl:i64, sz:i64
  const z, 0
  intr in, file.open, src, z
  const fl, 13                ; write-only | create | truncate
  intr out, file.open, dst, fl
  const sz, 7
  bnew buf, sz                ; a small buffer: many reads
  const total, 0
loop:
  intr n, file.read, in, buf, z
  jeqi n, 0, done
  intr _, file.write, out, buf, z, n
  add total, total, n
  jmp loop
done:
  intr _, file.close, in
  intr _, file.close, out
  intr _, file.close, out     ; idempotent
  ret total
.end
.func read_timeout(addr:ref, d:i64) -> ref
  .local c:ref, buf:ref, n:i64, z:i64, e:ref, s:ref, sz:i64
  intr c, net.connect, addr
  const sz, 16
  bnew buf, sz
  const z, 0
  intr _, time.timeout, d
  .try b, x, h, e
b:
  intr n, net.read, c, buf, z
x:
  const s, "read"
  ret s
h:
  intr _, net.close, c
  errkind s, e
  ret s
.end
.func accept_forever(addr:ref) -> void
  .local l:ref, c:ref
  intr l, net.listen, addr
  intr c, net.accept, l
  retv
.end
.func accept_and_fail(a:ref) -> i64
  .local l:ref, c:ref, e:ref, m:ref
  intr l, net.listen, a
  intr c, net.accept, l
  const m, "handler failed"
  newerr e, m
  throw e                     ; the conn and the listener it got are closed
.end
.func accept_on(l:ref) -> void
  .local c:ref
  intr c, net.accept, l
  intr _, net.close, c
  retv
.end
.func accept_pass(a:ref) -> ref
  .local l:ref, c:ref, t:ref
  intr l, net.listen, a
  intr c, net.accept, l
  spawn t, echo_once, c       ; the child owns c from now on
  ret t
.end
.func echo_once(c:ref) -> i64
  .local buf:ref, n:i64, z:i64, sz:i64
  const sz, 64
  bnew buf, sz
  const z, 0
  intr n, net.read, c, buf, z
  intr _, net.write, c, buf, z, n
  ret n                       ; no close: ending closes it
.end
.func listen(addr:ref) -> ref
  .local l:ref
  intr l, net.listen, addr
  ret l
.end
.func open_missing(p:ref) -> ref
  .local f:ref, z:i64, e:ref, s:ref
  const z, 0
  .try b, x, h, e
b:
  intr f, file.open, p, z
x:
  const s, "opened?"
  ret s
h:
  errmsg s, e
  ret s
.end
`

func ioBus(t *testing.T, caps bus.Capability, lim sched.ResourceLimits) (*bus.Bus, *bus.Member, *vmloop.Program) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 2}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel(), Limits: lim}, caps)
	})
	return b, m, testkit.Prog(t, b, ioProg)
}

func TestFileIO(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		data := strings.Repeat("jade file io ", 1000)
		require.NoError(t, os.WriteFile(src, []byte(data), 0o644))
		o := testkit.SpawnAwait(t, m, p, "copyfile", vmloop.Str(src), vmloop.Str(dst))
		require.Equal(t, sched.Success, o.Kind, "copyfile: %v", o)
		require.Equal(t, int64(len(data)), o.Value.Int(), "copyfile: %v", o)
		if got, _ := os.ReadFile(dst); string(got) != data {
			t.Fatalf("copy differs: %d bytes", len(got))
		}
		o = testkit.SpawnAwait(t, m, p, "open_missing", vmloop.Str(filepath.Join(dir, "nope")))
		if o.Kind != sched.Success || !strings.Contains(o.Value.String(), "file.open: no such file or directory") {
			t.Fatalf("open of a missing file: %v", o)
		}
		if b.Scheduler().IOBackend() == "" || b.Scheduler().IOStats().Ops[evpoll.Write] == 0 {
			t.Fatalf("no I/O went through the backend: %q %v", b.Scheduler().IOBackend(), b.Scheduler().IOStats())
		}
	})
}

// TestIOTimeoutAndCancel: a read that outlives its time.timeout throws a
// TimeoutError (its operation is cancelled); a task blocked in accept is
// cancelled cleanly; nothing stays in flight.
func TestIOTimeoutAndCancel(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close() // never writes
			}
		}()
		o := testkit.SpawnAwait(t, m, p, "read_timeout", vmloop.Str(ln.Addr().String()), ms(20))
		require.Equal(t, sched.Success, o.Kind, "read with timeout: %v", o)
		require.Equal(t, vmloop.ErrKindTimeout, o.Value.String(), "read with timeout: %v", o)
		// The socket operations went through the backend (the ring's own
		// SQEs on io_uring), not Go's net package.
		st := b.Scheduler().IOStats()
		if st.Ops[evpoll.Connect] == 0 || st.Ops[evpoll.Recv] == 0 || st.Cancelled == 0 ||
			b.Scheduler().IOBackend() == "io_uring" && st.Kernel == 0 {
			t.Fatalf("%s stats: %v", b.Scheduler().IOBackend(), st)
		}
		task, err := m.Spawn(nil, p, "accept_forever", vmloop.Str("127.0.0.1:0"))
		require.NoError(t, err)
		for task.State() != sched.Waiting {
			time.Sleep(time.Millisecond)
		}
		m.Cancel(task)
		o = testkit.Await(t, task)
		require.Equal(t, sched.Cancelled, o.Kind, "cancelled accept: %v", o)
		deadline := time.Now().Add(5 * time.Second)
		for m.Engine().InFlightIO() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d operations still in flight", m.Engine().InFlightIO())
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// TestHandlesClosedWithTheirTask: a task that ends any way closes the
// descriptors it owns; a handle passed to a spawned task belongs to it.
func TestHandlesClosedWithTheirTask(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		_, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		// A listener made by one task and handed to another through a join
		// result stays owned by its maker, which has ended: it is closed.
		o := testkit.SpawnAwait(t, m, p, "listen", vmloop.Str("127.0.0.1:0"))
		require.Equal(t, sched.Success, o.Kind, "listen: %v", o)
		closedLn := o.Value
		task, err := m.Spawn(nil, p, "accept_on", closedLn)
		require.NoError(t, err)
		if o := testkit.Await(t, task); o.Kind != sched.Failure || o.Value.ErrKind() != vmloop.ErrKindIO || !strings.Contains(o.Value.Message(), "is closed") {
			t.Fatalf("accept on a closed listener: %v", o)
		}
		for _, c := range []struct {
			fn   string
			want sched.OutcomeKind
		}{{"accept_and_fail", sched.Failure}, {"accept_pass", sched.Success}} {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := ln.Addr().String()
			ln.Close()
			task, err := m.Spawn(nil, p, c.fn, vmloop.Str(addr))
			require.NoError(t, err)
			var conn net.Conn
			for i := 0; ; i++ {
				if conn, err = net.Dial("tcp", addr); err == nil {
					break
				}
				if i == 500 {
					t.Fatalf("%s: dial: %v", c.fn, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if c.fn == "accept_pass" {
				conn.Write([]byte("hello"))
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(conn)
			conn.Close()
			require.NoError(t, err, "%s: the connection was not closed", c.fn)
			if c.fn == "accept_pass" && string(got) != "hello" {
				t.Fatalf("echo_once: %q", got)
			}
			if o := testkit.Await(t, task); o.Kind != c.want {
				t.Fatalf("%s: %v", c.fn, o)
			}
			// The listener died with its owner: nobody accepts any more.
			deadline := time.Now().Add(5 * time.Second)
			for {
				c2, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					break
				}
				c2.Close()
				if time.Now().After(deadline) {
					t.Fatalf("%s: the listener outlived its owner", c.fn)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
}

// TestIOLimitsAndCapability: inFlightIO throws a catchable ResourceError;
// an engine without CapIO gets a CapabilityError.
func TestIOLimitsAndCapability(t *testing.T) {
	_, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{InFlightIO: 1})
	task, err := m.Spawn(nil, p, "accept_forever", vmloop.Str("127.0.0.1:0"))
	require.NoError(t, err)
	for m.Engine().InFlightIO() != 1 {
		time.Sleep(time.Millisecond)
	}
	o := testkit.SpawnAwait(t, m, p, "accept_forever", vmloop.Str("127.0.0.1:0"))
	if o.Kind != sched.Failure || o.Value.ErrKind() != vmloop.ErrKindResource || !strings.Contains(o.Value.Message(), "inFlightIO 1") {
		t.Fatalf("over the in-flight limit: %v", o)
	}
	m.Cancel(task)
	testkit.Await(t, task)

	_, m2, p2 := ioBus(t, bus.CapSpawn, sched.ResourceLimits{})
	o = testkit.SpawnAwait(t, m2, p2, "accept_forever", vmloop.Str("127.0.0.1:0"))
	if o.Kind != sched.Failure || o.Value.ErrKind() != vmloop.ErrKindCapability {
		t.Fatalf("without CapIO: %v", o)
	}
}
