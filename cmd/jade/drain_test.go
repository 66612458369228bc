//go:build unix

package main

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/draintest"
	"github.com/jadevm/jade/internal/feature"
	"github.com/jadevm/jade/internal/testkit"
)

var (
	drainServer = filepath.Join("..", "..", "examples", "testdata", "drain_server.jasm")
	drainQueued = filepath.Join("..", "..", "examples", "testdata", "drain_queued.jasm")
)

// TestSIGTERMDrains: SIGTERM to `jade run` while 300 connections have a
// request read and the reply pending: new connections are refused, every
// reply arrives, and jade exits 0 once the clients have closed — on both
// Linux backends.
func TestSIGTERMDrains(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	testkit.Pollers(t, func(t *testing.T) {
		cmd, addr, stdout, stderr := startJade(t, bin)
		draintest.Drive(t, addr, 300, func() {
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		})
		code := waitExit(t, cmd, 10*time.Second)
		require.Equal(t, exitSuccess, code, "stderr: %s", stderr)
		require.Equal(t, "0\n", stdout.String())
		require.Contains(t, stderr.String(), "SIGTERM: draining")
	})
}

// TestSIGTERMServesTheAcceptQueue: SIGTERM to `jade run` while 1,000
// connections, each with its request sent, wait in the accept queue of a
// server that has not accepted yet: none is reset, every one gets its ack
// and reply, new connections are refused, and jade exits 0 — on both
// Linux backends.
func TestSIGTERMServesTheAcceptQueue(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	testkit.Pollers(t, func(t *testing.T) {
		cmd, addr, stdout, stderr := startJadeFile(t, bin, drainQueued)
		draintest.DriveQueued(t, addr, 1000, func() {
			require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		})
		code := waitExit(t, cmd, 10*time.Second)
		require.Equal(t, exitSuccess, code, "stderr: %s", stderr)
		require.Equal(t, "0\n", stdout.String())
	})
}

// TestSIGTERMDrainDeadline: connections whose clients stay open past
// --drain-timeout are cancelled and listed (file:line and the intrinsic
// each waits in), and jade exits with the drain
// code (main itself succeeded).
func TestSIGTERMDrainDeadline(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	cmd, addr, _, stderr := startJade(t, bin, "--drain-timeout", "300ms")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("x"))
	require.NoError(t, err)
	_, err = c.Read(make([]byte, 1))
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	code := waitExit(t, cmd, 10*time.Second)
	require.Equal(t, exitDrain, code, "stderr: %s", stderr)
	require.Contains(t, stderr.String(), "context deadline exceeded before the drain ended: cancelled 1 task (engine main: 1 Waiting)")
	require.Contains(t, stderr.String(), "Waiting at "+drainServer+":45 (conn) in net.read", "the report names the line and the wait")
}

// startJade runs drain_server.jasm in a jade process on a free port and
// waits until it accepts; the process inherits JADE_POLLER (set by
// testkit.Pollers).
func startJade(t *testing.T, bin string, flags ...string) (*exec.Cmd, string, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return startJadeFile(t, bin, drainServer, flags...)
}

// startJadeFile is startJade for the server in file.
func startJadeFile(t *testing.T, bin, file string, flags ...string) (*exec.Cmd, string, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	args := append(append([]string{"run"}, flags...), file, addr)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return cmd, addr, &stdout, &stderr
		}
		require.True(t, time.Now().Before(deadline), "jade does not accept on %s: %v (stderr %s)", addr, err, &stderr)
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits for cmd to exit within d and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(d):
		cmd.Process.Kill()
		t.Fatalf("jade did not exit within %v", d)
		return -1
	}
}
