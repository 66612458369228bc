package bench

import (
	"fmt"
	"testing"
)

// BenchmarkEcho measures a TCP echo server over loopback: Go client
// goroutines, one per connection, each doing request/response round trips
// of 64-byte messages (b.N messages in all, shared among the connections).
// The servers:
//
//   - jade: examples/echo.jasm (one task per connection) on a runtime with
//     echoWorkers worker threads;
//   - goroutine: a Go net server with one goroutine per connection.
//
// Both run in this process at GOMAXPROCS = echoWorkers+1 (the P that Jade
// keeps for the host serves the clients; the Go server shares both Ps with
// its clients). Reported: msgs/s, and the p50 and p99 round-trip latency
// seen by the clients. Connections are set up before the timer starts.
func BenchmarkEcho(b *testing.B) {
	for _, conns := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			b.Run("jade", func(b *testing.B) {
				WithProcs(echoWorkers+1, func() { runEcho(b, StartJadeEcho, conns) })
			})
			b.Run("goroutine", func(b *testing.B) {
				WithProcs(echoWorkers+1, func() {
					runEcho(b, func(int) (*EchoServer, error) { return StartGoEcho() }, conns)
				})
			})
		})
	}
}

// echoWorkers is the Jade worker count of BenchmarkEcho.
const echoWorkers = 1

func runEcho(b *testing.B, start func(workers int) (*EchoServer, error), conns int) {
	s, err := start(echoWorkers)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	c, err := DialEcho(s.Addr, conns)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	r, err := c.Run(b.N)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.MsgsPerSec, "msgs/s")
	b.ReportMetric(float64(r.Lat.P50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(r.Lat.P99.Nanoseconds()), "p99-ns")
}
