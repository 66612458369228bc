package evpolltest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
)

// EchoNetPeer runs the server side of an echo (accept, recv, send, close)
// on the backend against a client from package net. It returns the
// backend's stats for backend-specific checks.
func EchoNetPeer(t *testing.T, open Opener, s Sockets) evpoll.Stats {
	h := Open(t, open)
	lfd, ap := Listen(t, s)
	accept := &evpoll.Op{Kind: evpoll.Accept, Fd: lfd}
	h.Submit(accept, 1)
	h.Poll(0) // the accept is started before the client dials

	done := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", ap.String())
		if err != nil {
			done <- err
			return
		}
		_, err = c.Write([]byte("hello, backend"))
		var got []byte
		if err == nil {
			got, err = io.ReadAll(c) // the server echoes, then closes
		}
		if err == nil && string(got) != "hello, backend" {
			err = io.ErrUnexpectedEOF
		}
		c.Close() // before reporting: descriptor-leak checks follow
		done <- err
	}()

	cfd := h.OK(1)
	if !accept.Addr.Addr().IsLoopback() || accept.Addr.Port() == 0 {
		t.Errorf("accept peer address = %v", accept.Addr)
	}
	buf := make([]byte, 64)
	n := h.Do(&evpoll.Op{Kind: evpoll.Recv, Fd: cfd, Buf: buf}, 2)
	if got := h.Do(&evpoll.Op{Kind: evpoll.Send, Fd: cfd, Buf: buf[:n]}, 3); got != n {
		t.Fatalf("short send %d/%d", got, n)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, 4)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, 5)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("client: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client timed out")
	}
	st := h.B.Stats()
	for _, k := range []evpoll.Kind{evpoll.Accept, evpoll.Recv, evpoll.Send, evpoll.Close} {
		if st.Ops[k] == 0 {
			t.Errorf("no %v op counted: %v", k, st)
		}
	}
	if st.Pool != 0 {
		t.Errorf("socket ops went to the file pool: %v", st)
	}
	if st.Submitted != st.Completed || h.B.Pending() != 0 {
		t.Errorf("submitted %d, completed %d, pending %d", st.Submitted, st.Completed, h.B.Pending())
	}
	return st
}

// EchoBothEnds connects and accepts on the backend, echoes 20 round trips
// in both directions, and sees EOF after the peer closes.
func EchoBothEnds(t *testing.T, open Opener, s Sockets) {
	h := Open(t, open)
	sfd, cfd := h.Pair(s, 1)
	tok := evpoll.Token(10)
	for i := 0; i < 20; i++ {
		msg := []byte{byte(i), 'p', 'i', 'n', 'g'}
		in := make([]byte, 16)
		h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: in}, tok) // queued first: no data yet
		h.Submit(&evpoll.Op{Kind: evpoll.Send, Fd: cfd, Buf: msg}, tok+1)
		h.OK(tok + 1)
		n := h.OK(tok)
		if !bytes.Equal(in[:n], msg) {
			t.Fatalf("round %d: got %q, want %q", i, in[:n], msg)
		}
		back := make([]byte, 16)
		h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: cfd, Buf: back}, tok+2)
		h.Submit(&evpoll.Op{Kind: evpoll.Send, Fd: sfd, Buf: in[:n]}, tok+3)
		h.OK(tok + 3)
		if m := h.OK(tok + 2); !bytes.Equal(back[:m], msg) {
			t.Fatalf("round %d: echoed %q, want %q", i, back[:m], msg)
		}
		tok += 4
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, tok)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: make([]byte, 8)}, tok+1); n != 0 {
		t.Fatalf("recv after peer close = %d, want EOF", n)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: sfd}, tok+2)
}

// ConnectRefused connects to a port nothing listens on: the failure must
// arrive as a completion with a negative Res, which it returns so that the
// caller can check the OS's error code.
func ConnectRefused(t *testing.T, open Opener, s Sockets) evpoll.Completion {
	h := Open(t, open)
	lfd, ap := Listen(t, s)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, 1)
	cfd, err := s.Socket(ap)
	if err != nil {
		t.Fatal(err)
	}
	h.Submit(&evpoll.Op{Kind: evpoll.Connect, Fd: cfd, Addr: ap}, 2)
	c := h.Wait(2)
	if c.Res >= 0 {
		t.Fatalf("connect to a closed port succeeded: %+v", c)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, 3)
	return c
}

// CancelRecv cancels a Recv waiting for data: it ends once, with
// -ECANCELED and FlagCancelled; a repeated Cancel before the completion is
// nil or ErrNotPending, one after it is ErrNotPending; the socket still
// works afterwards.
func CancelRecv(t *testing.T, open Opener, s Sockets) {
	h := Open(t, open)
	a, c := h.Pair(s, 1)
	id := h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 10)
	h.Poll(0)
	if err := h.B.Cancel(id); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if err := h.B.Cancel(id); err != nil && !errors.Is(err, evpoll.ErrNotPending) {
		t.Fatalf("repeated cancel: %v", err)
	}
	got := h.Wait(10)
	if !got.Cancelled() || !errors.Is(got.Err(), syscall.ECANCELED) {
		t.Fatalf("cancelled recv: %+v (%v)", got, got.Err())
	}
	if err := h.B.Cancel(id); !errors.Is(err, evpoll.ErrNotPending) {
		t.Fatalf("cancel of a delivered op: %v", err)
	}
	if st := h.B.Stats(); st.Cancelled != 1 {
		t.Errorf("Stats.Cancelled = %d", st.Cancelled)
	}
	h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 11)
	h.Do(&evpoll.Op{Kind: evpoll.Send, Fd: c, Buf: []byte("x")}, 12)
	if n := h.OK(11); n != 1 {
		t.Fatalf("recv after cancel = %d", n)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 13)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 14)
	if p := h.B.Pending(); p != 0 {
		t.Errorf("pending = %d", p)
	}
}

// CloseFailsWaiters (for backends that must fail waiters when a Close op
// closes their descriptor): a Recv queued on a socket ends with
// -ECANCELED and FlagCancelled when a Close op closes that socket. It
// returns the closed descriptor for OS-specific checks.
func CloseFailsWaiters(t *testing.T, open Opener, s Sockets) int {
	h := Open(t, open)
	a, c := h.Pair(s, 1)
	h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 10)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 11)
	if got := h.Wait(10); !got.Cancelled() || !errors.Is(got.Err(), syscall.ECANCELED) {
		t.Fatalf("recv on a closed socket: %+v (%v)", got, got.Err())
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 12)
	return a
}

// Wake: a Wake from another goroutine ends a Wait that would otherwise
// block for 10 s; a Wake before Wait is not lost; wakes coalesce until a
// Wait observes them.
func Wake(t *testing.T, open Opener) {
	h := Open(t, open)
	var out [4]evpoll.Completion
	for i := 0; i < 3; i++ {
		go func() {
			time.Sleep(20 * time.Millisecond)
			if err := h.B.Wake(); err != nil {
				t.Errorf("wake: %v", err)
			}
		}()
		start := time.Now()
		n, err := h.B.Wait(10*time.Second, out[:])
		if el := time.Since(start); err != nil || n != 0 || el > 2*time.Second {
			t.Fatalf("Wait after Wake: n=%d err=%v after %v", n, err, el)
		}
	}
	for i := 0; i < 3; i++ {
		if err := h.B.Wake(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if n, err := h.B.Wait(10*time.Second, out[:]); err != nil || n != 0 || time.Since(start) > 2*time.Second {
		t.Fatalf("Wait after early Wake: n=%d err=%v after %v", n, err, time.Since(start))
	}
	start = time.Now()
	if n, _ := h.B.Wait(20*time.Millisecond, out[:]); n != 0 || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("coalesced wakes: second Wait returned n=%d after %v", n, time.Since(start))
	}
	if st := h.B.Stats(); st.WakeUps != 4 || st.Wakes != 4 {
		t.Errorf("wakes=%d wakeups=%d, want 4 and 4 (coalesced)", st.Wakes, st.WakeUps)
	}
}

// Timeout: Wait on an idle backend honours its timeout and never returns
// early; Wait(0) returns a Nop's completion.
func Timeout(t *testing.T, open Opener) {
	h := Open(t, open)
	var out [4]evpoll.Completion
	for _, d := range []time.Duration{0, 1500 * time.Microsecond, 30 * time.Millisecond} {
		start := time.Now()
		n, err := h.B.Wait(d, out[:])
		if n != 0 || err != nil {
			t.Fatalf("Wait(%v) = %d, %v", d, n, err)
		}
		if el := time.Since(start); el < d || el > d+2*time.Second {
			t.Errorf("Wait(%v) took %v", d, el)
		}
	}
	h.Submit(&evpoll.Op{Kind: evpoll.Nop}, 7)
	if n := h.Poll(0); n != 1 || h.Got[7].Res != 0 {
		t.Fatalf("nop: n=%d %+v", n, h.Got[7])
	}
}

// File opens (creates) a file, writes at the file position, reads at
// offsets, at the position (EOF) and past the end, closes it, and fails to
// open a path below a regular file. It returns the backend's stats.
func File(t *testing.T, open Opener) evpoll.Stats {
	h := Open(t, open)
	path := filepath.Join(t.TempDir(), "f")
	fd := h.Do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadWrite | evpoll.Create | evpoll.Truncate, Mode: 0o644}, 1)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("hello "), Offset: -1}, 2); n != 6 {
		t.Fatalf("write = %d", n)
	}
	if n := h.Do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("world"), Offset: -1}, 3); n != 5 {
		t.Fatalf("write = %d", n)
	}
	buf := make([]byte, 32)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 0}, 4); string(buf[:n]) != "hello world" {
		t.Fatalf("read at 0 = %q", buf[:n])
	}
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 6}, 5); string(buf[:n]) != "world" {
		t.Fatalf("read at 6 = %q", buf[:n])
	}
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: -1}, 6); n != 0 {
		t.Fatalf("read at the position (end) = %d, want EOF", n)
	}
	if n := h.Do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 100}, 7); n != 0 {
		t.Fatalf("read past the end = %d, want EOF", n)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 8)
	h.Submit(&evpoll.Op{Kind: evpoll.Open, Path: filepath.Join(path, "missing")}, 9)
	if c := h.Wait(9); c.Res >= 0 {
		t.Fatalf("open of a path below a file: %+v", c)
	}
	return h.B.Stats()
}

// Errors checks the synchronous failures of Submit, Cancel, Wait and Wake,
// before and after Close. open must give a backend that allows at most two
// ops in flight.
func Errors(t *testing.T, open Opener) {
	h := Open(t, open)
	b := h.B
	if _, err := b.Submit(&evpoll.Op{Kind: evpoll.NumKinds}, 1); !errors.Is(err, evpoll.ErrInvalidOp) {
		t.Errorf("bad kind: %v", err)
	}
	if _, err := b.Submit(&evpoll.Op{Kind: evpoll.Open, Path: "a\x00b"}, 1); !errors.Is(err, evpoll.ErrInvalidOp) {
		t.Errorf("NUL in path: %v", err)
	}
	if _, err := b.Wait(0, nil); !errors.Is(err, evpoll.ErrInvalidOp) {
		t.Errorf("empty out: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, 3); !errors.Is(err, evpoll.ErrTooMany) {
		t.Errorf("over the in-flight limit: %v", err)
	}
	if err := b.Cancel(1 << 40); !errors.Is(err, evpoll.ErrNotPending) {
		t.Errorf("cancel of an unknown id: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, 4); !errors.Is(err, evpoll.ErrClosed) {
		t.Errorf("submit after close: %v", err)
	}
	if _, err := b.Wait(0, make([]evpoll.Completion, 1)); !errors.Is(err, evpoll.ErrClosed) {
		t.Errorf("wait after close: %v", err)
	}
	if err := b.Wake(); !errors.Is(err, evpoll.ErrClosed) {
		t.Errorf("wake after close: %v", err)
	}
	// The cleanup registered by Open closes b a second time: that must
	// succeed too.
}

// CloseUnblocksWait: a goroutine blocked in Wait(-1) returns ErrClosed
// when another goroutine closes the backend. Backends in an owner-thread
// mode, where Wait may not run on another goroutine, skip it.
func CloseUnblocksWait(t *testing.T, open Opener) {
	h := Open(t, open)
	errc := make(chan error, 1)
	go func() {
		var out [4]evpoll.Completion
		for {
			if _, err := h.B.Wait(-1, out[:]); err != nil {
				errc <- err
				return
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	if err := h.B.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("blocked Wait after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait still blocked after Close")
	}
}

// ManyInFlight submits n Nops before waiting for any, then collects their
// n completions. A backend's default in-flight bound must pass it with n
// above the scheduler engine's own bound (sched.DefaultMaxInFlightIO), so
// that the engine refuses first.
func ManyInFlight(t *testing.T, open Opener, n int) {
	h := Open(t, open)
	for i := range n {
		if _, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1)); err != nil {
			t.Fatalf("op %d of %d: %v", i+1, n, err)
		}
	}
	seen := make([]bool, n+1)
	out := make([]evpoll.Completion, 512)
	for got := 0; got < n; {
		k, err := h.B.Wait(5*time.Second, out)
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			t.Fatalf("no completion within 5s; %d of %d received", got, n)
		}
		for _, c := range out[:k] {
			if c.Token < 1 || c.Token > evpoll.Token(n) || seen[c.Token] || c.Res != 0 {
				t.Fatalf("completion %+v: unknown, repeated or failed", c)
			}
			seen[c.Token] = true
		}
		got += k
	}
	if p := h.B.Pending(); p != 0 {
		t.Fatalf("pending %d after every completion", p)
	}
}

// PollReadable (backends with readiness polls: not IOCP): a Poll op on a
// socket with nothing to read waits; bytes sent to it complete it with
// POLLIN (1) set, and a Recv after it gets every byte (the poll consumed
// none); a Poll of a socket that already holds bytes completes at once;
// a cancelled Poll ends with -ECANCELED; the same Op is submitted twice
// while the first is in flight (backends only read a Poll); a Poll of a
// listener completes when a connection waits to be accepted.
func PollReadable(t *testing.T, open Opener, s Sockets) {
	h := Open(t, open)
	a, c := h.Pair(s, 1)
	poll := &evpoll.Op{Kind: evpoll.Poll, Fd: a}
	h.Submit(poll, 10)
	if n := h.Poll(20 * time.Millisecond); n != 0 {
		t.Fatalf("a poll of a socket with nothing to read completed: %d completions", n)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Send, Fd: c, Buf: []byte("hello")}, 11)
	if got := h.OK(10); got&1 == 0 {
		t.Fatalf("poll result %#x: want POLLIN", got)
	}
	h.Submit(poll, 12) // ready at once: the bytes are still there
	if got := h.OK(12); got&1 == 0 {
		t.Fatalf("poll of a readable socket: %#x", got)
	}
	buf := make([]byte, 16)
	if n := h.Do(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: buf}, 13); n != 5 || string(buf[:5]) != "hello" {
		t.Fatalf("recv after the polls = %d %q: a poll consumed bytes", n, buf[:max(n, 0)])
	}
	id1 := h.Submit(poll, 14)
	id2 := h.Submit(poll, 15) // the same Op again, the first in flight
	h.Poll(0)
	for _, id := range []evpoll.OpID{id1, id2} {
		if err := h.B.Cancel(id); err != nil {
			t.Fatalf("cancel: %v", err)
		}
	}
	for _, tok := range []evpoll.Token{14, 15} {
		if got := h.Wait(tok); !got.Cancelled() || !errors.Is(got.Err(), syscall.ECANCELED) {
			t.Fatalf("cancelled poll: %+v (%v)", got, got.Err())
		}
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 16)
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 17)

	l, addr := Listen(t, s)
	h.Submit(&evpoll.Op{Kind: evpoll.Poll, Fd: l}, 20)
	if n := h.Poll(20 * time.Millisecond); n != 0 {
		t.Fatalf("a poll of a listener without connections completed")
	}
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := h.OK(20); got&1 == 0 {
		t.Fatalf("poll of a listener with a connection: %#x", got)
	}
	h.Do(&evpoll.Op{Kind: evpoll.Close, Fd: l}, 21)
	if p := h.B.Pending(); p != 0 {
		t.Errorf("pending = %d", p)
	}
}
