//go:build windows

package iocp

// These tests exercise the evpoll contract on a real completion port. CI
// only compiles them (go test -c with GOOS=windows); run them on a Windows
// machine with `go test ./iocp`.

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/windows"
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
	if b.Name() != "iocp" {
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

// pair returns a connected pair of sockets (accepted, connected), both
// made through the backend, and closes the listener.
func pair(t *testing.T, h *harness, tok evpoll.Token) (int, int) {
	t.Helper()
	lfd, ap := listen(t)
	cfd, err := Socket(ap)
	if err != nil {
		t.Fatal(err)
	}
	h.submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, tok)
	h.submit(&evpoll.Op{Kind: evpoll.Connect, Fd: cfd, Addr: ap}, tok+1)
	sfd := h.ok(tok)
	h.ok(tok + 1)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: lfd}, tok+2)
	return sfd, cfd
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
		if _, err = c.Write([]byte("hello, iocp")); err != nil {
			done <- err
			return
		}
		got, err := io.ReadAll(c)
		if err == nil && string(got) != "hello, iocp" {
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
	st := h.b.Stats()
	for _, k := range []evpoll.Kind{evpoll.Accept, evpoll.Recv, evpoll.Send, evpoll.Close} {
		if st.Ops[k] == 0 {
			t.Errorf("no %v op counted: %v", k, st)
		}
	}
	if st.Kernel != 3 || st.Pool != 0 {
		t.Errorf("want accept, recv and send as overlapped calls: %v", st)
	}
	if st.Submitted != st.Completed || h.b.Pending() != 0 {
		t.Errorf("submitted %d, completed %d, pending %d", st.Submitted, st.Completed, h.b.Pending())
	}
}

// TestEchoBothEnds: ConnectEx and AcceptEx, round trips, EOF.
func TestEchoBothEnds(t *testing.T) {
	h := newHarness(t, Options{})
	sfd, cfd := pair(t, h, 1)
	tok := evpoll.Token(10)
	for i := 0; i < 20; i++ {
		msg := []byte{byte(i), 'p', 'i', 'n', 'g'}
		in := make([]byte, 16)
		h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: in}, tok)
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
	c := h.wait(2)
	if c.Res >= 0 {
		t.Fatalf("connect to a closed port succeeded: %+v", c)
	}
	if !errors.Is(c.Err(), windows.WSAECONNREFUSED) && !errors.Is(c.Err(), windows.ERROR_CONNECTION_REFUSED) {
		t.Logf("connect refused as %v", c.Err())
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: cfd}, 3)
}

// TestCancel: a Recv in the kernel ends with -ECANCELED and FlagCancelled
// after CancelIoEx; the socket still works afterwards.
func TestCancel(t *testing.T) {
	h := newHarness(t, Options{})
	a, c := pair(t, h, 1)
	id := h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 10)
	h.poll(0)
	if err := h.b.Cancel(id); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if err := h.b.Cancel(id); err != nil {
		t.Fatalf("repeated cancel: %v", err)
	}
	got := h.wait(10)
	if !got.Cancelled() || !errors.Is(got.Err(), syscall.ECANCELED) {
		t.Fatalf("cancelled recv: %+v (%v)", got, got.Err())
	}
	if err := h.b.Cancel(id); !errors.Is(err, evpoll.ErrNotPending) {
		t.Fatalf("cancel of a delivered op: %v", err)
	}
	if st := h.b.Stats(); st.Cancelled != 1 {
		t.Errorf("Stats.Cancelled = %d", st.Cancelled)
	}
	h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 11)
	h.do(&evpoll.Op{Kind: evpoll.Send, Fd: c, Buf: []byte("x")}, 12)
	if n := h.ok(11); n != 1 {
		t.Fatalf("recv after cancel = %d", n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 13)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 14)
}

// TestCloseFailsWaiters: a Close op ends the ops in flight on its handle.
func TestCloseFailsWaiters(t *testing.T) {
	h := newHarness(t, Options{})
	a, c := pair(t, h, 1)
	h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 10)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: a}, 11)
	if got := h.wait(10); !got.Cancelled() || !errors.Is(got.Err(), syscall.ECANCELED) {
		t.Fatalf("recv on closed socket: %+v (%v)", got, got.Err())
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: c}, 12)
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

// TestTimeout: Wait honours its (millisecond) timeout and never returns
// early.
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
	h.submit(&evpoll.Op{Kind: evpoll.Nop}, 7)
	if n := h.poll(0); n != 1 || h.got[7].Res != 0 {
		t.Fatalf("nop: n=%d %+v", n, h.got[7])
	}
}

// TestFile: open, write and read at offsets and at the backend-kept file
// position, and appends.
func TestFile(t *testing.T) {
	h := newHarness(t, Options{PoolSize: 2})
	path := filepath.Join(t.TempDir(), "f")
	fd := h.do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.ReadWrite | evpoll.Create | evpoll.Truncate, Mode: 0o644}, 1)
	// Two Offset -1 writes in flight at once: they take the position in order.
	h.submit(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("hello "), Offset: -1}, 2)
	h.submit(&evpoll.Op{Kind: evpoll.Write, Fd: fd, Buf: []byte("world"), Offset: -1}, 3)
	if h.ok(2) != 6 || h.ok(3) != 5 {
		t.Fatal("short write")
	}
	buf := make([]byte, 32)
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 0}, 4); string(buf[:n]) != "hello world" {
		t.Fatalf("read at 0 = %q", buf[:n])
	}
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 6}, 5); string(buf[:n]) != "world" {
		t.Fatalf("read at 6 = %q", buf[:n])
	}
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: -1}, 6); n != 0 {
		t.Fatalf("read at the position (end) = %d, want EOF", n)
	}
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: fd, Buf: buf, Offset: 100}, 7); n != 0 {
		t.Fatalf("read past the end = %d, want EOF", n)
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 8)

	afd := h.do(&evpoll.Op{Kind: evpoll.Open, Path: path, OpenFlags: evpoll.WriteOnly | evpoll.Append}, 9)
	h.do(&evpoll.Op{Kind: evpoll.Write, Fd: afd, Buf: []byte("!"), Offset: -1}, 10)
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: afd}, 11)

	rfd := h.do(&evpoll.Op{Kind: evpoll.Open, Path: path}, 12)
	if n := h.do(&evpoll.Op{Kind: evpoll.Read, Fd: rfd, Buf: buf, Offset: -1}, 13); string(buf[:n]) != "hello world!" {
		t.Fatalf("after append: %q", buf[:n])
	}
	h.do(&evpoll.Op{Kind: evpoll.Close, Fd: rfd}, 14)

	h.submit(&evpoll.Op{Kind: evpoll.Open, Path: filepath.Join(path, "missing")}, 15)
	if c := h.wait(15); c.Res >= 0 {
		t.Fatalf("open of a bad path: %+v", c)
	}
	if st := h.b.Stats(); st.Pool != 4 {
		t.Errorf("Stats.Pool = %d, want 4 opens: %v", st.Pool, st)
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

// TestCloseWithOpsInFlight: Close cancels a Recv in the kernel, waits for
// its packet, and unblocks a Wait.
func TestCloseWithOpsInFlight(t *testing.T) {
	b, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, b: b, got: map[evpoll.Token]evpoll.Completion{}}
	a, c := pair(t, h, 1)
	h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: a, Buf: make([]byte, 8)}, 10)
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
		if err != nil && !errors.Is(err, evpoll.ErrClosed) {
			t.Fatalf("blocked Wait after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait still blocked after Close")
	}
	if p := b.(*Port); p.inKernel != 0 {
		t.Errorf("%d ops still in the kernel after Close", p.inKernel)
	}
	windows.Closesocket(windows.Handle(uintptr(a)))
	windows.Closesocket(windows.Handle(uintptr(c)))
}
