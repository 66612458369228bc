//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/syncbuf"
)

// TestFlightSignal: with --flight, SIGUSR2 dumps the flight recorder to
// a file in --flight-dir while the program runs.
func TestFlightSignal(t *testing.T) {
	dir := t.TempDir()
	src := write(t, "sleep.jasm", `.func main() -> i64
  .local ms:i64
  const ms, 1500000000
  intr  _, time.sleep, ms
  ret   ms
.end
`)
	// Caught here too, so that a signal before jade's Notify does not
	// end the test process.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGUSR2)
	defer signal.Stop(guard)
	var stdout, stderr syncbuf.Buffer
	done := make(chan int)
	go func() {
		done <- run([]string{"run", "--flight", "4096", "--flight-dir", dir, src}, &stdout, &stderr)
	}()
	time.Sleep(700 * time.Millisecond)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR2))
	require.Equal(t, exitSuccess, <-done, stderr.String())
	files, err := filepath.Glob(filepath.Join(dir, "jade-flight-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1, stderr.String())
	require.Contains(t, stderr.String(), "flight recorder dumped to "+files[0])
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.True(t, json.Valid(b))
}
