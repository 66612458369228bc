package debugsrv_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/debugsrv"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/jprof"
	"github.com/jadevm/jade/internal/testkit"
)

// TestJadeProfileEndpoint: /debug/jade/profile?seconds=1 returns a pprof
// CPU profile of the Jade task spinning meanwhile; a bad seconds is 400.
func TestJadeProfileEndpoint(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p, err := rt.Load("spin.jasm", []byte(`
.func spin() -> i64
  .local i:i64
  const i, 0
l:
  addi i, i, 1
  jmp  l
.end`))
	require.NoError(t, err)
	task, err := rt.Spawn(p, "spin")
	require.NoError(t, err)
	defer task.Cancel()
	srv := httptest.NewServer(debugsrv.Handler(hostbus.Scheduler(rt)))
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/debug/jade/profile?seconds=x")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	start := time.Now()
	resp, err = srv.Client().Get(srv.URL + "/debug/jade/profile?seconds=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.GreaterOrEqual(t, time.Since(start), time.Second)
	prof, err := profile.Parse(resp.Body)
	require.NoError(t, err)
	require.NotEmpty(t, prof.Sample, "no sample of a task spinning for a second")
	for _, s := range prof.Sample {
		require.Equal(t, "spin", s.Location[0].Line[0].Function.Name)
		require.Equal(t, "spin.jasm", s.Location[0].Line[0].Function.Filename)
	}
}

// TestJadeHeapEndpoint: /debug/jade/heap?seconds=1 returns a pprof heap
// profile of what a task allocated meanwhile, at its allocation site; a
// bad seconds is 400, a second heap profile at once 409.
func TestJadeHeapEndpoint(t *testing.T) {
	rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
	p, err := rt.Load("churn.jasm", []byte(`
.func churn() -> i64
  .local sz:i64, b:ref
  const sz, 1000
l:
  bnew b, sz
  free b
  jmp  l
.end`))
	require.NoError(t, err)
	task, err := rt.Spawn(p, "churn")
	require.NoError(t, err)
	defer task.Cancel()
	srv := httptest.NewServer(debugsrv.Handler(hostbus.Scheduler(rt)))
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/debug/jade/heap?seconds=0")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Heap sampling is process-wide: while another heap profile runs, the
	// endpoint refuses.
	other, err := jprof.StartHeap(nil, 0)
	require.NoError(t, err)
	resp, err = srv.Client().Get(srv.URL + "/debug/jade/heap?seconds=1")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.NoError(t, other.Stop())

	resp, err = srv.Client().Get(srv.URL + "/debug/jade/heap?seconds=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	prof, err := profile.Parse(resp.Body)
	require.NoError(t, err)
	require.NotEmpty(t, prof.Sample, "a second of 1000-byte allocations, no sample")
	for _, s := range prof.Sample {
		require.Equal(t, "churn", s.Location[0].Line[0].Function.Name)
		require.Equal(t, int64(6), s.Location[0].Line[0].Line, "the bnew's line (the source starts with a newline)")
	}
}
