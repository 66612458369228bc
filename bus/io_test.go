//go:build linux

package bus_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/evpoll"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
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
	b, err := bus.New(bus.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	w := timerwheel.DefaultConfig()
	m, err := b.RegisterEngine("io", sched.EngineRuntimeConfig{TimerWheel: &w, Limits: lim}, caps)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(t.Context()) })
	return b, m, prog(t, b, ioProg)
}

func forPollers(t *testing.T, f func(t *testing.T)) {
	for _, p := range []string{"uring", "epoll"} {
		t.Run(p, func(t *testing.T) {
			t.Setenv("JADE_POLLER", p)
			f(t)
		})
	}
}

func TestFileIO(t *testing.T) {
	forPollers(t, func(t *testing.T) {
		b, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
		data := strings.Repeat("jade file io ", 1000)
		if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		o := spawnT(t, b, m, p, "copyfile", vmloop.Str(src), vmloop.Str(dst))
		if o.Kind != sched.Success || o.Value.Int() != int64(len(data)) {
			t.Fatalf("copyfile: %v", o)
		}
		if got, _ := os.ReadFile(dst); string(got) != data {
			t.Fatalf("copy differs: %d bytes", len(got))
		}
		o = spawnT(t, b, m, p, "open_missing", vmloop.Str(filepath.Join(dir, "nope")))
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
	forPollers(t, func(t *testing.T) {
		b, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
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
		o := spawnT(t, b, m, p, "read_timeout", vmloop.Str(ln.Addr().String()), ms(20))
		if o.Kind != sched.Success || o.Value.String() != vmloop.ErrKindTimeout {
			t.Fatalf("read with timeout: %v", o)
		}
		task, err := m.Spawn(nil, p, "accept_forever", vmloop.Str("127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		for task.State() != sched.Waiting {
			time.Sleep(time.Millisecond)
		}
		m.Cancel(task)
		if o := await(t, task); o.Kind != sched.Cancelled {
			t.Fatalf("cancelled accept: %v", o)
		}
		deadline := time.Now().Add(5 * time.Second)
		for m.Engine().InFlightIO() != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d operations still in flight", m.Engine().InFlightIO())
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// TestIOLimitsAndCapability: inFlightIO throws a catchable ResourceError;
// an engine without CapIO gets a CapabilityError.
func TestIOLimitsAndCapability(t *testing.T) {
	b, m, p := ioBus(t, bus.CapAll, sched.ResourceLimits{InFlightIO: 1})
	task, err := m.Spawn(nil, p, "accept_forever", vmloop.Str("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	for m.Engine().InFlightIO() != 1 {
		time.Sleep(time.Millisecond)
	}
	o := spawnT(t, b, m, p, "accept_forever", vmloop.Str("127.0.0.1:0"))
	if o.Kind != sched.Failure || o.Value.ErrKind() != vmloop.ErrKindResource || !strings.Contains(o.Value.Message(), "inFlightIO 1") {
		t.Fatalf("over the in-flight limit: %v", o)
	}
	m.Cancel(task)
	await(t, task)

	b2, m2, p2 := ioBus(t, bus.CapSpawn, sched.ResourceLimits{})
	o = spawnT(t, b2, m2, p2, "accept_forever", vmloop.Str("127.0.0.1:0"))
	if o.Kind != sched.Failure || o.Value.ErrKind() != vmloop.ErrKindCapability {
		t.Fatalf("without CapIO: %v", o)
	}
}
