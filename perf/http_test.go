package perf

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseWrk reads a wrk --latency report and refuses one with errors.
func TestParseWrk(t *testing.T) {
	out := `Running 3s test @ http://127.0.0.1:40000/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   253.06us   40.67us   1.86ms   87.11%
    Req/Sec   195.45k     5.00k  203.00k    80.00%
  Latency Distribution
     50%  248.00us
     75%  270.00us
     90%  301.00us
     99%  409.00us
  609424 requests in 3.00s, 55.21MB read
Requests/sec: 203140.73
Transfer/sec:     18.40MB
`
	r, n, err := parseWrk(out)
	require.NoError(t, err)
	require.Equal(t, int64(609424), n)
	require.InDelta(t, 203140.73, r.rps, 0.01)
	require.Equal(t, 248*time.Microsecond, r.lat.P50)
	require.Equal(t, 409*time.Microsecond, r.lat.P99)
	require.Equal(t, 1860*time.Microsecond, r.lat.Max)
	_, _, err = parseWrk(out + "  Socket errors: connect 0, read 12, write 0, timeout 0\n")
	require.ErrorContains(t, err, "Socket errors")
	_, _, err = parseWrk("nothing")
	require.Error(t, err)
	d, err := parseWrkDuration("2.00s")
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, d)
}
