//go:build unix

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
	"github.com/jadevm/jade/internal/testkit"
)

// TestSIGTERMBusyKeepAlive: 50 keep-alive clients sending requests back
// to back to examples/http.jasm, then SIGTERM with --drain-timeout 2s, on
// both backends: every request gets its reply, the first request made
// after the drain began is answered with "Connection: close" and then the
// server closes (EOF), and jade exits 0 before the drain's deadline.
func TestSIGTERMBusyKeepAlive(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	testkit.Pollers(t, func(t *testing.T) {
		cmd, addr, _, stderr := startJadeFile(t, bin, filepath.Join("..", "..", "examples", "http.jasm"), "--drain-timeout", "2s")
		const clients = 50
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		started := make(chan struct{}, clients)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- busyClient(addr, started)
			}()
		}
		for range clients {
			<-started
		}
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, exitSuccess, waitExit(t, cmd, 10*time.Second), "stderr: %s", stderr)
	})
}

// busyClient sends GET / on one connection, back to back, until a reply
// says "Connection: close"; it then expects the server's EOF.
func busyClient(addr string, started chan<- struct{}) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, _ := http.NewRequest("GET", "http://a/", nil)
		if err := req.Write(c); err != nil {
			return fmt.Errorf("request %d: %w", n, err)
		}
		resp, err := http.ReadResponse(r, req)
		if err != nil {
			return fmt.Errorf("reply %d: %w", n, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != "Hello, World!" {
			return fmt.Errorf("reply %d: body %q: %v", n, body, err)
		}
		if n == 0 {
			started <- struct{}{}
		}
		if resp.Close {
			if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
				return fmt.Errorf("after Connection: close: %v, want EOF", err)
			}
			return nil
		}
	}
}
