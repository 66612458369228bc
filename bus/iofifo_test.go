//go:build linux

package bus_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// fifoProg reads and opens FIFOs under time.timeout, and naps beside them.
const fifoProg = `
.abi 1.2
.func fifo_read(p:ref, d:i64) -> ref
  .local f:ref, buf:ref, n:i64, z:i64, e:ref, s:ref, sz:i64
  const z, 0
  intr f, file.open, p, z
  const sz, 16
  bnew buf, sz
  intr _, time.timeout, d
  .try b, x, h, e
b:
  intr n, file.read, f, buf, z
x:
  intr _, file.close, f
  const s, "read"
  ret s
h:
  intr _, file.close, f
  errkind s, e
  ret s
.end
.func fifo_open(p:ref, fl:i64, d:i64) -> ref
  .local f:ref, e:ref, s:ref
  intr _, time.timeout, d
  .try b, x, h, e
b:
  intr f, file.open, p, fl
x:
  intr _, file.close, f
  const s, "opened"
  ret s
h:
  errmsg s, e
  ret s
.end
.func naps(k:i64) -> i64
  .local i:i64, d:i64
  const i, 0
  const d, 1000000
loop:
  jge i, k, done
  intr _, time.sleep, d
  addi i, i, 1
  jmp loop
done:
  ret i
.end
.func read_file(p:ref, d:i64) -> i64
  .local f:ref, buf:ref, n:i64, z:i64, sz:i64
  const z, 0
  intr _, time.timeout, d
  intr f, file.open, p, z
  const sz, 64
  bnew buf, sz
  intr _, time.timeout, d
  intr n, file.read, f, buf, z
  intr _, file.close, f
  ret n
.end
`

// fifoBus is a one-worker bus (every task shares the worker) with the
// FIFO program, and a FIFO in a temporary directory. A cleanup, run before
// the bus shuts down, opens and closes the FIFO read-write: an open or a
// read the kernel holds for the other end then returns, so a backend that
// blocks fails the test instead of hanging its shutdown.
func fifoBus(t *testing.T) (*bus.Member, *vmloop.Program, string) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
	})
	p := testkit.Prog(t, b, fifoProg)
	path := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	t.Cleanup(func() {
		if fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0); err == nil {
			syscall.Close(fd)
		}
	})
	return m, p, path
}

// awaitWithin awaits task for at most d (not testkit.Patience: a backend
// that blocks the worker would hold the test for minutes).
func awaitWithin(t *testing.T, task *sched.Task, d time.Duration, what string) sched.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	o, err := bus.Await(ctx, task)
	require.NoError(t, err, "%s: no outcome within %v", what, d)
	return o
}

// TestFifoReadTimeout: a read of a FIFO whose writer never writes waits
// for readiness, not in read(2) on the worker: it throws TimeoutError when
// its time.timeout passes, and meanwhile a task on the same (only) worker
// naps and answers.
func TestFifoReadTimeout(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		m, p, path := fifoBus(t)
		w, err := os.OpenFile(path, os.O_RDWR, 0) // the writer that never writes
		require.NoError(t, err)
		t.Cleanup(func() {
			w.Write([]byte("!")) // frees a read stuck in the kernel
			w.Close()
		})
		const timeout = 1500 * time.Millisecond
		start := time.Now()
		reader := testkit.Spawn(t, m, p, "fifo_read", vmloop.Str(path), vmloop.I64(int64(timeout)))
		napStart := time.Now()
		o := awaitWithin(t, testkit.Spawn(t, m, p, "naps", vmloop.I64(20)), 10*time.Second, "naps beside the FIFO read")
		require.Equal(t, sched.Success, o.Kind, "naps: %v", o)
		t.Logf("20 naps of 1 ms beside the FIFO read: %v", time.Since(napStart))
		select {
		case <-reader.Done():
			o, _ := reader.Outcome()
			t.Fatalf("the FIFO read ended before the naps: %v", o)
		default:
		}
		o = awaitWithin(t, reader, 10*time.Second, "FIFO read under a timeout")
		require.Equal(t, sched.Success, o.Kind, "fifo_read: %v", o)
		require.Equal(t, vmloop.ErrKindTimeout, o.Value.String(), "fifo_read: %v", o)
		require.GreaterOrEqual(t, time.Since(start), timeout, "the timeout fired early")
		t.Logf("FIFO read under a %v timeout: TimeoutError after %v", timeout, time.Since(start))
	})
}

// TestFifoOpens: file.open never waits for a FIFO's other end, on either
// backend: read-only opens with no writer succeed at once (more of them
// than the epoll backend has pool goroutines), a write-only open with no
// reader throws IoError ENXIO at once, and a regular file's open and read
// under a timeout still complete.
func TestFifoOpens(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		m, p, path := fifoBus(t)
		d := vmloop.I64(int64(time.Second))
		o := awaitWithin(t, testkit.Spawn(t, m, p, "fifo_open", vmloop.Str(path), vmloop.I64(1), d), 10*time.Second, "write-only FIFO open")
		require.Equal(t, sched.Success, o.Kind, "write-only open: %v", o)
		require.True(t, strings.Contains(o.Value.String(), "file.open: no such device or address"), "write-only open without a reader: %v", o)
		var opens []*sched.Task
		for range 8 {
			opens = append(opens, testkit.Spawn(t, m, p, "fifo_open", vmloop.Str(path), vmloop.I64(0), d))
		}
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, []byte("regular"), 0o600))
		o = awaitWithin(t, testkit.Spawn(t, m, p, "read_file", vmloop.Str(file), d), 10*time.Second, "regular-file read behind FIFO opens")
		require.Equal(t, sched.Success, o.Kind, "read_file: %v", o)
		require.Equal(t, int64(len("regular")), o.Value.Int(), "read_file: %v", o)
		for i, task := range opens {
			o := awaitWithin(t, task, 10*time.Second, "read-only FIFO open")
			require.Equal(t, sched.Success, o.Kind, "open %d: %v", i, o)
			require.Equal(t, "opened", o.Value.String(), "open %d: %v", i, o)
		}
	})
}
