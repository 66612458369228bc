//go:build linux

package bus_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const ioRowProg = `
.abi 1.2
.func read_first(p:ref) -> i64
  .local f:ref, buf:ref, n:i64, z:i64, sz:i64
  const z, 0
  intr f, file.open, p, z
  const sz, 8
  bnew buf, sz
  intr n, file.read, f, buf, z
  intr _, file.close, f
  ret n
.end
`

// TestIORowIsTheIntrinsic: an I/O intrinsic is its command row. With
// file.read's row replaced by a probe row (declared in export_test.go
// only, no switch elsewhere updated), the same program's file.read starts,
// submits and completes through the probe's functions; with the row put
// back it reads as before. On both backends.
func TestIORowIsTheIntrinsic(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		var m *bus.Member
		b := testkit.Bus(t, bus.Config{Workers: 2}, func(b *bus.Bus) {
			m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
		})
		p := testkit.Prog(t, b, ioRowProg)
		path := filepath.Join(t.TempDir(), "five")
		require.NoError(t, os.WriteFile(path, []byte("hello"), 0o600))
		run := func() sched.Outcome {
			task, err := m.Spawn(nil, p, "read_first", vmloop.Str(path))
			require.NoError(t, err)
			return testkit.Await(t, task)
		}

		o := run()
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(5), o.Value.Int(), "the real row reads the whole file")

		starts, dones, restore := bus.ProbeIORow(vmloop.IntrFileRead)
		o = run()
		restore()
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(1001), o.Value.Int(), "the probe row read one byte")
		require.Equal(t, int64(1), starts.Load())
		require.Equal(t, int64(1), dones.Load())

		o = run()
		require.Equal(t, sched.Success, o.Kind, "%v", o)
		require.Equal(t, int64(5), o.Value.Int(), "the real row is back")
	})
}
