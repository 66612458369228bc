package debugsrv_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/debugsrv"
	"github.com/jadevm/jade/internal/hostbus"
)

// TestJadeTraceEndpoint: /debug/jade/trace dumps the flight recorder and
// ?seconds=1 records a trace, both JSON with a worker track; without the
// flight recorder the dump is 409, a bad seconds 400.
func TestJadeTraceEndpoint(t *testing.T) {
	get := func(srv *httptest.Server, path string) (int, []byte) {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	isTrace := func(b []byte) {
		var tr struct {
			TraceEvents []struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"traceEvents"`
		}
		require.NoError(t, json.Unmarshal(b, &tr), string(b))
		found := false
		for _, e := range tr.TraceEvents {
			found = found || e.Name == "thread_name" && e.Args["name"] == "worker 0"
		}
		require.True(t, found, "no worker track")
	}

	rt, err := jade.New(jade.Options{Workers: 1, FlightEvents: 1024})
	require.NoError(t, err)
	defer rt.Shutdown(context.Background())
	p, err := rt.Load("t.jasm", []byte(".func main() -> i64\n  .local r:i64\n  yield\n  const r, 0\n  ret r\n.end\n"))
	require.NoError(t, err)
	_, err = rt.Run(context.Background(), p, "main")
	require.NoError(t, err)
	srv := httptest.NewServer(debugsrv.Handler(hostbus.Scheduler(rt)))
	defer srv.Close()
	code, b := get(srv, "/debug/jade/trace")
	require.Equal(t, http.StatusOK, code, string(b))
	isTrace(b)
	code, b = get(srv, "/debug/jade/trace?seconds=1")
	require.Equal(t, http.StatusOK, code, string(b))
	isTrace(b)
	code, _ = get(srv, "/debug/jade/trace?seconds=0")
	require.Equal(t, http.StatusBadRequest, code)

	t.Setenv("JADE_FLIGHT", "")
	off, err := jade.New(jade.Options{Workers: 1})
	require.NoError(t, err)
	defer off.Shutdown(context.Background())
	srv2 := httptest.NewServer(debugsrv.Handler(hostbus.Scheduler(off)))
	defer srv2.Close()
	code, _ = get(srv2, "/debug/jade/trace")
	require.Equal(t, http.StatusConflict, code)
}
