//go:build linux

package bus_test

import (
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const ioAllocProg = `
.abi 1.3
; writes connects to addr and writes 4 bytes n times.
.func writes(addr:ref, n:i64) -> i64
  .local c:ref, b:ref, z:i64, four:i64, i:i64, w:i64
  intr  c, net.connect, addr
  const four, 4
  bnew  b, four
  const z, 0
  const i, 0
loop:
  jge   i, n, done
  intr  w, net.write, c, b, z, four
  addi  i, i, 1
  jmp   loop
done:
  intr  _, net.close, c
  ret   i
.end
`

// TestInlineWriteAllocatesNothing: a net.write the socket takes at once
// (the reply of a server's connection task) allocates nothing: its call
// record stays on the worker's stack. It used to cost one allocation a
// write.
func TestInlineWriteAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, ioAllocProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					io.Copy(io.Discard, c)
				}()
			}
		}()
		run := func(n int) {
			task, err := m.Spawn(nil, p, "writes", vmloop.Str(ln.Addr().String()), vmloop.I64(int64(n)))
			require.NoError(t, err)
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
		}
		run(1000) // warm-up
		const n = 20_000
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		run(n)
		runtime.ReadMemStats(&m1)
		per := float64(m1.Mallocs-m0.Mallocs) / n
		require.Less(t, per, 0.1, "%d allocations for %d writes", m1.Mallocs-m0.Mallocs, n)
	})
}
