package bench

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMapPutGet: every version of map_put_get computes the same sum (the
// Lua ones where the interpreter is installed).
func TestMapPutGet(t *testing.T) {
	e, err := NewEnv(1)
	require.NoError(t, err)
	defer e.Close()
	const n = 20_000
	require.NoError(t, e.MapPutGetJade(n))
	require.NoError(t, e.MapPutGetJadeGo(n))
	require.NoError(t, MapPutGetGo(n))
	for _, lua := range []string{"lua5.4", "luajit"} {
		if _, err := exec.LookPath(lua); err != nil {
			t.Logf("%s not installed", lua)
			continue
		}
		d, err := MapPutGetLua(lua, n)
		require.NoError(t, err, lua)
		require.Positive(t, d, lua)
	}
	_, err = MapPutGetLua("no-such-lua", n)
	require.ErrorContains(t, err, "not installed")
}

// BenchmarkMapPutGet: one key put and got (map_put_get of 500k keys).
func BenchmarkMapPutGet(b *testing.B) {
	const n = 500_000
	b.Run("jade", func(b *testing.B) {
		e := env(b)
		for b.Loop() {
			if err := e.MapPutGetJade(n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	})
	b.Run("go", func(b *testing.B) {
		WithProcs(workers, func() {
			for b.Loop() {
				if err := MapPutGetGo(n); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	})
}
