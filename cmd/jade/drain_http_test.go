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

// TestSIGTERMIdleAndBusyKeepAlive: 50 idle keep-alive connections (one
// request served, then nothing) and 50 busy ones (requests back to back)
// to examples/http.jasm, then SIGTERM with --drain-timeout 2s, on both
// backends: every busy request gets its reply (the one made after the
// drain began with "Connection: close", then EOF), every idle connection
// sees the server's FIN (EOF, not a reset) at once — its task waits on its
// socket and the drain in one select — and jade exits 0 well before the
// deadline (an idle connection that held the drain would keep it to the
// deadline: exit 6).
func TestSIGTERMIdleAndBusyKeepAlive(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	testkit.Pollers(t, func(t *testing.T) {
		cmd, addr, _, stderr := startJadeFile(t, bin, filepath.Join("..", "..", "examples", "http.jasm"), "--drain-timeout", "2s")
		const clients = 50
		var wg sync.WaitGroup
		errs := make(chan error, 2*clients)
		started := make(chan struct{}, 2*clients)
		fins := make(chan time.Time, clients)
		for range clients {
			wg.Add(2)
			go func() {
				defer wg.Done()
				errs <- busyClient(addr, started)
			}()
			go func() {
				defer wg.Done()
				errs <- idleClient(addr, started, fins)
			}()
		}
		for range 2 * clients {
			<-started
		}
		// Idle longer than the 100 ms after a reply in which http.jasm
		// still counts a connection busy.
		time.Sleep(300 * time.Millisecond)
		term := time.Now()
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, exitSuccess, waitExit(t, cmd, 10*time.Second), "stderr: %s", stderr)
		exited := time.Since(term)
		close(fins)
		first, last := time.Hour, time.Duration(0)
		for f := range fins {
			first, last = min(first, f.Sub(term)), max(last, f.Sub(term))
		}
		t.Logf("idle connections' FINs %v to %v after SIGTERM; jade exited after %v", first, last, exited)
		require.Less(t, exited, 2*time.Second, "jade waited for the drain's deadline")
	})
}

// idleClient sends one GET / on a connection, reads its keep-alive
// reply, then waits: the server must end the connection with a FIN (EOF,
// not a reset), whose arrival time goes to fins.
func idleClient(addr string, started chan<- struct{}, fins chan<- time.Time) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	req, _ := http.NewRequest("GET", "http://a/", nil)
	if err := req.Write(c); err != nil {
		return fmt.Errorf("idle: request: %w", err)
	}
	resp, err := http.ReadResponse(r, req)
	if err != nil {
		return fmt.Errorf("idle: reply: %w", err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		return fmt.Errorf("idle: reply: close %v: %v", resp.Close, err)
	}
	started <- struct{}{}
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("idle: after the drain: %v, want EOF (a FIN)", err)
	}
	fins <- time.Now()
	return nil
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
