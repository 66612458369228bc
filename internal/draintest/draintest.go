// Package draintest drives a server through a graceful drain for the
// tests of Runtime.Close and of SIGTERM in `jade run`: it opens many
// connections with a request in flight on each, starts the drain, and
// checks that every request the server had read before the drain still
// gets its reply and that new connections are refused. The server is
// examples/testdata/drain_server.jasm: an ack byte when a request is read,
// the reply (the request echoed) 200 ms later. DriveQueued does the same
// for connections still waiting in the kernel's accept queue when the
// drain begins (examples/testdata/drain_queued.jasm accepts nothing for
// its first 2 s).
package draintest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Result is what a drive observed.
type Result struct {
	// Replies is how many connections got their full reply after the
	// drain began.
	Replies int
	// Refused is how many dials after the drain began were refused.
	Refused int
}

// Drive opens conns connections to addr, sends a distinct request on each
// and waits until every one is acknowledged (read by the server), then
// calls begin, which must start the drain and return. It then requires
// that new connections are refused (the first dial that fails with
// ECONNREFUSED within 5 s, and every dial after it) and that every
// connection receives its request back intact, and closes them.
func Drive(t testing.TB, addr string, conns int, begin func()) Result {
	t.Helper()
	cs, reqs := open(t, addr, conns)
	// Write every request, then wait for every ack: all are in flight
	// (read, the reply pending) when the drain begins.
	acks := each(cs, func(i int, c net.Conn) error {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Write(reqs[i]); err != nil {
			return err
		}
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return fmt.Errorf("ack: %w", err)
		}
		if b[0] != 'A' {
			return fmt.Errorf("ack: got %q, want \"A\"", b[0])
		}
		return nil
	})
	require.NoError(t, acks)
	begin()
	res := refusals(t, addr)
	res.Replies = served(t, cs, "reply", func(i int) string { return string(reqs[i]) })
	return res
}

// DriveQueued opens conns connections to addr and sends a distinct request
// on each, without waiting for the server to accept them, then calls
// begin, which must start the drain and return. The server must not have
// accepted them yet (drain_queued.jasm waits 2 s): they wait in the
// kernel's accept queue when the drain begins. It then requires, as
// Drive, that new connections are refused, and that every queued
// connection is served all the same: its ack, then its request back.
func DriveQueued(t testing.TB, addr string, conns int, begin func()) Result {
	t.Helper()
	cs, reqs := open(t, addr, conns)
	for i, c := range cs {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		_, err := c.Write(reqs[i])
		require.NoError(t, err, "connection %d", i)
	}
	begin()
	res := refusals(t, addr)
	res.Replies = served(t, cs, "ack and reply", func(i int) string { return "A" + string(reqs[i]) })
	return res
}

// open dials conns connections to addr, closed at the test's end, and
// makes each its distinct request.
func open(t testing.TB, addr string, conns int) ([]net.Conn, [][]byte) {
	t.Helper()
	cs := make([]net.Conn, conns)
	reqs := make([][]byte, conns)
	t.Cleanup(func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	})
	for i := range cs {
		c, err := dial(addr)
		require.NoError(t, err, "connection %d", i)
		cs[i] = c
		reqs[i] = fmt.Appendf(nil, "request %06d", i)
	}
	return cs, reqs
}

// served requires that every connection of cs receives want(i) whole,
// then closes it; it returns how many did.
func served(t testing.TB, cs []net.Conn, what string, want func(i int) string) int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	err := each(cs, func(i int, c net.Conn) error {
		w := want(i)
		got := make([]byte, len(w))
		if _, err := io.ReadFull(c, got); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if string(got) != w {
			return fmt.Errorf("%s %q, want %q", what, got, w)
		}
		mu.Lock()
		n++
		mu.Unlock()
		return c.Close()
	})
	require.NoError(t, err)
	require.Equal(t, len(cs), n)
	return n
}

// refusals requires that dials to addr are refused within 5 s of the
// drain's beginning, and the 20 after the first refusal too.
func refusals(t testing.TB, addr string) Result {
	t.Helper()
	var res Result
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := dial(addr)
		if err == nil || reset(err) {
			// Into the backlog before the listener closed (a reset: the
			// close raced the handshake).
			if c != nil {
				c.Close()
			}
			require.True(t, time.Now().Before(deadline), "the server still accepts connections 5 s after the drain began")
			time.Sleep(time.Millisecond)
			continue
		}
		require.True(t, refused(err), "dial after the drain: %v, want connection refused", err)
		res.Refused++
		break
	}
	for range 20 {
		_, err := dial(addr)
		require.Error(t, err, "a dial after the listener closed connected")
		require.True(t, refused(err), "dial after the drain: %v", err)
		res.Refused++
	}
	return res
}

// refused reports a refused connection: ECONNREFUSED, or Winsock's
// WSAECONNREFUSED (10061), which Go's syscall does not map to it.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.Errno(10061))
}

// reset: a connection reset, on Windows as well (WSAECONNRESET, 10054:
// Go's syscall.ECONNRESET there is a value of its own that no socket call
// returns).
func reset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.Errno(10054))
}

func dial(addr string) (net.Conn, error) { return net.DialTimeout("tcp", addr, 5*time.Second) }

// each runs f for every connection concurrently and returns the first
// error, naming its connection.
func each(cs []net.Conn, f func(i int, c net.Conn) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(cs))
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i, c); err != nil {
				errs[i] = fmt.Errorf("connection %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
