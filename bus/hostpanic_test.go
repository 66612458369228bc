package bus_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestHostPanicTextHasNoGoState: a host intrinsic's panic traps its task
// with a text that other tasks may read (through a join), so it names the
// intrinsic and the panic's message but carries no Go stack and no Go
// value; the stack goes to Config.HostPanic. The text used to end with
// debug.Stack() (goroutine ids, file paths, addresses) and %v of the value.
func TestHostPanicTextHasNoGoState(t *testing.T) {
	var mu sync.Mutex
	var got []bus.HostPanic
	type secret struct{ p *int }
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{HostPanic: func(p bus.HostPanic) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}}, func(b *bus.Bus) {
		require.NoError(t, b.RegisterIntrinsic("host.boom_ptr", nil, vmloop.TVoid, 0,
			func(*bus.Call) (vmloop.Value, error) { panic(&secret{new(int)}) }))
		require.NoError(t, b.RegisterIntrinsic("host.boom_str", nil, vmloop.TVoid, 0,
			func(*bus.Call) (vmloop.Value, error) { panic("host bug") }))
		m = testkit.Engine(t, b, "e", sched.EngineRuntimeConfig{}, bus.CapAll)
	})
	p := testkit.Prog(t, b, `
.func ptr() -> void
  intr _, host.boom_ptr
  retv
.end
.func str() -> void
  intr _, host.boom_str
  retv
.end`)
	for fn, want := range map[string]string{
		"ptr": "host.boom_ptr panicked: a panic value of type *bus_test.secret",
		"str": "host.boom_str panicked: host bug",
	} {
		o := testkit.SpawnAwait(t, m, p, fn)
		require.Equal(t, sched.Trapped, o.Kind)
		require.Equal(t, vmloop.TrapHostPanic, o.Trap.Code)
		require.Equal(t, want, o.Trap.Msg)
		require.False(t, strings.Contains(o.Trap.Msg, "0x") || strings.Contains(o.Trap.Msg, "goroutine"), "%q", o.Trap.Msg)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	for _, p := range got {
		require.Contains(t, string(p.Stack), "goroutine", "the hook gets the Go stack")
		require.NotZero(t, p.TaskID)
		require.Equal(t, "e", p.Engine)
	}
}
