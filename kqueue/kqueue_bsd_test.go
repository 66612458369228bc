//go:build darwin || freebsd

package kqueue

// These tests exercise the evpoll contract on a real kqueue. CI only
// compiles them (go test -c with GOOS=darwin/freebsd); run them on a Mac or
// a FreeBSD machine with `go test ./kqueue`.

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// harness collects completions by token and fails on duplicates.
type harness struct {
	t   *testing.T
	b   evpoll.Backend
	got map[evpoll.Token]evpoll.Completion
	buf [16]evpoll.Completion
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	b, err := Open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if b.Name() != "kqueue" {
		t.Fatalf("Name() = %q", b.Name())
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &harness{t: t, b: b, got: map[evpoll.Token]evpoll.Completion{}}
}

func (h *harness) submit(op *evpoll.Op, tok evpoll.Token) evpoll.OpID {
	h.t.Helper()
	id, err := h.b.Submit(op, tok)
	if err != nil {
		h.t.Fatalf("submit %v: %v", op.Kind, err)
	}
	return id
}

func (h *harness) poll(timeout time.Duration) int {
	h.t.Helper()
	n, err := h.b.Wait(timeout, h.buf[:])
	if err != nil {
		h.t.Fatalf("wait: %v", err)
	}
	for _, c := range h.buf[:n] {
		if _, dup := h.got[c.Token]; dup {
			h.t.Fatalf("token %d completed twice", c.Token)
		}
		h.got[c.Token] = c
	}
	return n
}

// wait returns tok's completion, waiting up to 5 s.
func (h *harness) wait(tok evpoll.Token) evpoll.Completion {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, ok := h.got[tok]; ok {
			return c
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("token %d: no completion after 5s (pending %d)", tok, h.b.Pending())
		}
		h.poll(100 * time.Millisecond)
	}
}

func (h *harness) ok(tok evpoll.Token) int {
	h.t.Helper()
	c := h.wait(tok)
	if c.Res < 0 {
		h.t.Fatalf("token %d: %v", tok, c.Err())
	}
	return int(c.Res)
}

func (h *harness) do(op *evpoll.Op, tok evpoll.Token) int {
	h.t.Helper()
	h.submit(op, tok)
	return h.ok(tok)
}

func listen(t *testing.T) (int, netip.AddrPort) {
	t.Helper()
	fd, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap, err := LocalAddr(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, ap
}

// assertClosed fails unless fd is closed.
func assertClosed(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
		t.Errorf("fd %d still open (fcntl: %v)", fd, err)
	}
}

// TestEchoNetPeer: accept, recv, send and close on the backend; the client
// is Go's net package.
func TestEchoNetPeer(t *testing.T) {
	h := newHarness(t, Options{})
	lfd, ap := listen(t)
	accept := &evpoll.Op{Kind: evpoll.Accept, Fd: lfd}
	h.submit(accept, 1)
	h.poll(0)

	done := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", ap.String())
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		if _, err = c.Write([]byte("hello, kqueue")); err != nil {
			done <- err
			return
		}
		got, err := io.ReadAll(c)
		if err == nil && string(got) != "hello, kqueue" {
			err = io.ErrUnexpectedEOF
		}
		done <- err
	}()

	cfd := h.ok(1)
	if !accept.Addr.Addr().IsLoopback() || accept.Addr.Port() == 0 {
		t.Errorf("accept peer address = %v", accept.Addr)
	}
	buf := make([]byte, 64)
	n := h.do(&evpoll.Op{Kind: evpoll.Recv, Fd: cfd, Buf: buf}, 2)
	if got := h.do(&evpoll.Op{Kind: evpoll.Send, Fd: cfd, Buf: buf[:n]}, 3); got != n {
		t.Fatalf("short send %d/%d", got, n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, 4)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, 5)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("client: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client timed out")
	}
	assertClosed(t, cfd)
	assertClosed(t, lfd)
	st := h.b.Stats()
	for _, k := range []evpoll.Kind{evpoll.Accept, evpoll.Recv, evpoll.Send, evpoll.Close} {
		if st.Ops[k] == 0 {
			t.Errorf("no %v op counted: %v", k, st)
		}
	}
	if st.Pool != 0 {
		t.Errorf("socket ops went to the file pool: %v", st)
	}
	if st.Submitted != st.Completed || h.b.Pending() != 0 {
		t.Errorf("submitted %d, completed %d, pending %d", st.Submitted, st.Completed, h.b.Pending())
	}
}

// TestEchoBothEnds: connect and accept on the backend, round trips, EOF.
func TestEchoBothEnds(t *testing.T) {
	h := newHarness(t, Options{})
	lfd, ap := listen(t)
	cfd, err := Socket(ap)
	if err != nil {
		t.Fatal(err)
	}
	h.submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
	h.submit(&evpoll.Op{Kind: evpoll.Connect, Fd: cfd, Addr: ap}, 2)
	sfd := h.ok(1)
	h.ok(2)
	tok := evpoll.Token(10)
	for i := 0; i < 20; i++ {
		msg := []byte{byte(i), 'p', 'i', 'n', 'g'}
		in := make([]byte, 16)
		h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: in}, tok) // queued first: no data yet
		h.submit(&evpoll.Op{Kind: evpoll.Send, Fd: cfd, Buf: msg}, tok+1)
		if n := h.ok(tok); !bytes.Equal(in[:n], msg) {
			t.Fatalf("round %d: got %q", i, in[:n])
		}
		h.ok(tok + 1)
		tok += 2
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, tok)
	if n := h.do(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: make([]byte, 8)}, tok+1); n != 0 {
		t.Fatalf("recv after peer close = %d, want EOF", n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: sfd}, tok+2)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, tok+3)
}

// TestConnectRefused: the error arrives as a completion.
func TestConnectRefused(t *testing.T) {
	h := newHarness(t, Options{})
	lfd, ap := listen(t)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, 1)
	cfd, err := Socket(ap)
	if err != nil {
		t.Fatal(err)
	}
	h.submit(&evpoll.Op{Kind: evpoll.Connect, Fd: cfd, Addr: ap}, 2)
	if c := h.wait(2); !errors.Is(c.Err(), unix.ECONNREFUSED) {
		t.Fatalf("connect to a closed port: %+v (%v)", c, c.Err())
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, 3)
}

// socketPair returns a connected pair of non-blocking stream sockets.
func socketPair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fds[0], fds[1]
}

// TestCancel: a Recv waiting for data ends with -ECANCELED and
// FlagCancelled; cancelling it again or a finished op is harmless.
func TestCancel(t *testing.T) {
	h := newHarness(t, Options{})
	a, c := socketPair(t)
	id := h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 1)
	if err := h.b.Cancel(id); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	got := h.wait(1)
	if !got.Cancelled() || !errors.Is(got.Err(), unix.ECANCELED) {
		t.Fatalf("cancelled recv: %+v", got)
	}
	if err := h.b.Cancel(id); !errors.Is(err, evpoll.ErrNotPending) {
		t.Fatalf("cancel of a delivered op: %v", err)
	}
	if st := h.b.Stats(); st.Cancelled != 1 {
		t.Errorf("Stats.Cancelled = %d", st.Cancelled)
	}
	// The descriptor still works after a cancelled op.
	h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 2)
	h.do(&evpoll.Op{Kind: evpoll.Send, Fd: c, Buf: []byte("x")}, 3)
	if n := h.ok(2); n != 1 {
		t.Fatalf("recv after cancel = %d", n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 4)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 5)
}

// TestCloseFailsWaiters: a Close op ends the ops queued on its descriptor.
func TestCloseFailsWaiters(t *testing.T) {
	h := newHarness(t, Options{})
	a, c := socketPair(t)
	h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 1)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 2)
	if got := h.wait(1); !got.Cancelled() || !errors.Is(got.Err(), unix.ECANCELED) {
		t.Fatalf("recv on closed fd: %+v", got)
	}
	assertClosed(t, a)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 3)
}

// TestPipe: pipes are polled, not pooled.
func TestPipe(t *testing.T) {
	h := newHarness(t, Options{})
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	in := make([]byte, 8)
	h.submit(&evpoll.Op{Kind: evpoll.Read, Fd: p[0], Buf: in, Offset: -1}, 1)
	h.do(&evpoll.Op{Kind: evpoll.Write, Fd: p[1], Buf: []byte("pipe"), Offset: -1}, 2)
	if n := h.ok(1); string(in[:n]) != "pipe" {
		t.Fatalf("pipe read %q", in[:n])
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: p[1]}, 3)
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: p[0], Buf: in, Offset: -1}, 4); n != 0 {
		t.Fatalf("read after writer closed = %d, want EOF", n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: p[0]}, 5)
	if st := h.b.Stats(); st.Pool != 0 {
		t.Errorf("pipe ops went to the pool: %v", st)
	}
}

// TestWake: Wake returns a Wait blocked without a timeout, from another
// goroutine, and wakes are coalesced.
func TestWake(t *testing.T) {
	h := newHarness(t, Options{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if err := h.b.Wake(); err != nil {
			t.Errorf("wake: %v", err)
		}
	}()
	start := time.Now()
	var out [4]evpoll.Completion
	n, err := h.b.Wait(-1, out[:])
	wg.Wait()
	if n != 0 || err != nil {
		t.Fatalf("woken Wait = %d, %v", n, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("wake took %v", d)
	}
	for i := 0; i < 3; i++ {
		if err := h.b.Wake(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := h.b.Wait(time.Second, out[:]); n != 0 || err != nil {
		t.Fatalf("Wait after wakes = %d, %v", n, err)
	}
	st := h.b.Stats()
	if st.Wakes != 2 || st.WakeUps != 2 {
		t.Errorf("wakes=%d wakeups=%d, want 2 and 2 (coalesced)", st.Wakes, st.WakeUps)
	}
}

// TestTimeout: Wait honours its timeout and never returns early.
func TestTimeout(t *testing.T) {
	h := newHarness(t, Options{})
	var out [4]evpoll.Completion
	for _, d := range []time.Duration{0, 1500 * time.Microsecond, 30 * time.Millisecond} {
		start := time.Now()
		n, err := h.b.Wait(d, out[:])
		if n != 0 || err != nil {
			t.Fatalf("Wait(%v) = %d, %v", d, n, err)
		}
		if el := time.Since(start); el < d || el > d+2*time.Second {
			t.Errorf("Wait(%v) took %v", d, el)
		}
	}
	// Nop completes at once; Wait(0) returns it.
	h.submit(&evpoll.Op{Kind: evpoll.Nop}, 7)
	if n := h.poll(0); n != 1 || h.got[7].Res != 0 {
		t.Fatalf("nop: n=%d %+v", n, h.got[7])
	}
}

// TestFile: open, write and read at offsets and at the file position, on
// the blocking pool.
func TestFile(t *testing.T) {
	h := newHarness(t, Options{PoolSize: 2})
	path := filepath.Join(t.TempDir(), "f")
	fd := h.do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadWrite | evpoll.Create | evpoll.Truncate, Mode: 0o644}, 1)
	if n := h.do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("hello "), Offset: -1}, 2); n != 6 {
		t.Fatalf("write = %d", n)
	}
	if n := h.do(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("world"), Offset: -1}, 3); n != 5 {
		t.Fatalf("write = %d", n)
	}
	buf := make([]byte, 32)
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 0}, 4); string(buf[:n]) != "hello world" {
		t.Fatalf("pread = %q", buf[:n])
	}
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 6}, 5); string(buf[:n]) != "world" {
		t.Fatalf("pread at 6 = %q", buf[:n])
	}
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: -1}, 6); n != 0 {
		t.Fatalf("read at end = %d, want EOF", n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 7)
	assertClosed(t, fd)
	h.submit(&evpoll.Op{Kind: evpoll.Open, Path: filepath.Join(path, "missing")}, 8)
	if c := h.wait(8); !errors.Is(c.Err(), unix.ENOTDIR) && !errors.Is(c.Err(), unix.ENOENT) {
		t.Fatalf("open of a bad path: %+v", c)
	}
	if st := h.b.Stats(); st.Pool != 8 {
		t.Errorf("Stats.Pool = %d, want 8: %v", st.Pool, st)
	}
}

// TestErrors: synchronous failures of Submit, Cancel and Wait.
func TestErrors(t *testing.T) {
	b, err := Open(Options{MaxInFlight: 2})
	if err != nil {
		t.Fatal(err)
	}
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
		t.Errorf("over MaxInFlight: %v", err)
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
	if err := b.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// TestCloseUnblocksWait: Close makes a blocked Wait return ErrClosed.
func TestCloseUnblocksWait(t *testing.T) {
	b, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := b.Wait(-1, make([]evpoll.Completion, 1))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := b.Close(); err != nil {
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
