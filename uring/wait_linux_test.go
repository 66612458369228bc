//go:build linux

package uring

import (
	"errors"
	"net"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"golang.org/x/sys/unix"
)

// TestWaitTimeout: Wait(2ms) on an idle backend returns after at least
// 2 ms and (on the best of several tries) well under a tick of a
// millisecond-rounding poller plus scheduling noise.
func TestWaitTimeout(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		var out [4]evpoll.Completion
		for _, d := range []time.Duration{2 * time.Millisecond, 1500 * time.Microsecond} {
			var els []time.Duration
			for i := 0; i < 7; i++ {
				start := time.Now()
				n, err := h.B.Wait(d, out[:])
				el := time.Since(start)
				if err != nil || n != 0 {
					t.Fatalf("Wait(%v): n=%d err=%v", d, n, err)
				}
				if el < d {
					t.Fatalf("Wait(%v) returned early, after %v", d, el)
				}
				els = append(els, el)
			}
			sort.Slice(els, func(i, j int) bool { return els[i] < els[j] })
			if med := els[len(els)/2]; med > d+20*time.Millisecond {
				t.Errorf("Wait(%v): median %v (all %v)", d, med, els)
			}
			t.Logf("Wait(%v): min %v median %v max %v", d, els[0], els[len(els)/2], els[len(els)-1])
		}
		// Wait(0) polls.
		start := time.Now()
		if n, err := h.B.Wait(0, out[:]); n != 0 || err != nil || time.Since(start) > 100*time.Millisecond {
			t.Fatalf("Wait(0): n=%d err=%v after %v", n, err, time.Since(start))
		}
	})
}

// TestStaleCompletionDropped: a completion that names a slot's previous
// generation (the slot was released and reused) is dropped and counted,
// and the op now in the slot still completes exactly once.
func TestStaleCompletionDropped(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		old := h.Submit(&evpoll.Op{Kind: evpoll.Nop}, 1)
		h.OK(1)
		cur := h.Submit(&evpoll.Op{Kind: evpoll.Nop}, 2)
		if uint64(cur)&slots.IndexMask != uint64(old)&slots.IndexMask || cur == old {
			t.Fatalf("slot not reused with a new generation: old %#x new %#x", old, cur)
		}
		injectStale(t, h.B, old)
		h.OK(2)
		for i := 0; i < 3; i++ {
			h.Poll(5 * time.Millisecond)
		}
		if _, ok := h.Got[1]; !ok || len(h.Got) != 2 {
			t.Fatalf("completions %v", h.Got)
		}
		if st := h.B.Stats(); st.Stale != 1 {
			t.Fatalf("stale = %d, want 1", st.Stale)
		}
		if err := h.B.Cancel(old); !errors.Is(err, evpoll.ErrNotPending) {
			t.Fatalf("cancel with a stale id: %v", err)
		}
	})
}

// injectStale makes the backend see a completion for id the way a late
// kernel CQE (io_uring) or a late pool result (epoll) would arrive.
func injectStale(t *testing.T, b evpoll.Backend, id evpoll.OpID) {
	switch b := b.(type) {
	case *Ring:
		b.mu.Lock()
		defer b.mu.Unlock()
		e, err := b.sqeLocked()
		require.NoError(t, err)
		e.Opcode, e.Fd, e.UserData = opNop, -1, uint64(id)
		b.r.publish()
	case *Epoll:
		b.PostPoolResult(id, 0)
	}
}

// TestCQOverflow submits 20× the CQ size of NOPs without reaping: the
// kernel's overflow list (FEAT_NODROP) must hand every one back, once.
func TestCQOverflow(t *testing.T) {
	const ops = 160
	forEachBackend(t, func(o *Options) { o.Entries, o.CQEntries = 4, 8 }, func(t *testing.T, h *harness) {
		for i := 0; i < ops; i++ {
			h.Submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1))
		}
		for i := 0; i < ops; i++ {
			h.OK(evpoll.Token(i + 1))
		}
		if len(h.Got) != ops || h.B.Pending() != 0 {
			t.Fatalf("got %d completions, pending %d", len(h.Got), h.B.Pending())
		}
		st := h.B.Stats()
		if h.c.ring && st.Overflows == 0 {
			t.Errorf("the CQ never overflowed: %v", st)
		}
		t.Logf("%s", st)
	})
}

// TestTooManyInFlight: the slot table bounds the ops in flight.
func TestTooManyInFlight(t *testing.T) {
	forEachBackend(t, func(o *Options) { o.MaxInFlight = 4 }, func(t *testing.T, h *harness) {
		for i := 0; i < 4; i++ {
			h.Submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1))
		}
		if _, err := h.B.Submit(&evpoll.Op{Kind: evpoll.Nop}, 9); !errors.Is(err, evpoll.ErrTooMany) {
			t.Fatalf("fifth op: %v, want ErrTooMany", err)
		}
		for i := 0; i < 4; i++ {
			h.OK(evpoll.Token(i + 1))
		}
		h.Do(&evpoll.Op{Kind: evpoll.Nop}, 10)
	})
}

// TestPollOnlyProgress: a caller that never blocks (the scheduler's
// slice-boundary check is Wait(0)) still sees completions, including on a
// DEFER_TASKRUN ring where they are posted only when the owner enters.
func TestPollOnlyProgress(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		lfd, addr := listen(t)
		defer unix.Close(lfd)
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		sfd := h.Do(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
		defer unix.Close(sfd)
		for i := 0; i < 5; i++ {
			tok := evpoll.Token(10 + i)
			h.Submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: make([]byte, 4)}, tok)
			h.Poll(0)
			conn.Write([]byte("data"))
			deadline := time.Now().Add(5 * time.Second)
			for {
				h.Poll(0)
				if _, ok := h.Got[tok]; ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("recv %d never completed under Wait(0) polling", i)
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
	})
}

// TestGCWhileWaiting: a worker parked in Wait is in a syscall entered
// through unix.Syscall6, so a GC (which stops the world) completes without
// waiting for it.
func TestGCWhileWaiting(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		gcTook := make(chan time.Duration, 1)
		go func() {
			time.Sleep(20 * time.Millisecond) // let the owner park
			start := time.Now()
			runtime.GC()
			runtime.GC()
			gcTook <- time.Since(start)
			h.B.Wake()
		}()
		var out [4]evpoll.Completion
		_, err := h.B.Wait(10*time.Second, out[:])
		require.NoError(t, err)
		if d := <-gcTook; d > 2*time.Second {
			t.Fatalf("two GCs took %v while a worker was parked in Wait", d)
		}
	})
}
