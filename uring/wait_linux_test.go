//go:build linux

package uring

import (
	"errors"
	"net"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// TestWakeUnblocksWait: a Wake from another goroutine ends a Wait that
// would otherwise block for 10 s; a Wake before Wait is not lost; wakes
// coalesce.
func TestWakeUnblocksWait(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		var out [4]evpoll.Completion
		for i := 0; i < 3; i++ {
			go func() {
				time.Sleep(20 * time.Millisecond)
				if err := h.b.Wake(); err != nil {
					t.Errorf("wake: %v", err)
				}
			}()
			start := time.Now()
			n, err := h.b.Wait(10*time.Second, out[:])
			if el := time.Since(start); err != nil || n != 0 || el > 2*time.Second {
				t.Fatalf("Wait after Wake: n=%d err=%v after %v", n, err, el)
			}
		}
		// Wake first, then Wait: returns at once. Three Wakes coalesce into
		// one Wait return; the next Wait times out.
		for i := 0; i < 3; i++ {
			h.b.Wake()
		}
		start := time.Now()
		if n, err := h.b.Wait(10*time.Second, out[:]); err != nil || n != 0 || time.Since(start) > 2*time.Second {
			t.Fatalf("Wait after early Wake: n=%d err=%v after %v", n, err, time.Since(start))
		}
		start = time.Now()
		if n, _ := h.b.Wait(20*time.Millisecond, out[:]); n != 0 || time.Since(start) < 20*time.Millisecond {
			t.Fatalf("coalesced wakes: second Wait returned n=%d after %v", n, time.Since(start))
		}
		if st := h.b.Stats(); st.WakeUps != 4 || st.Wakes != 4 {
			t.Errorf("wakes=%d wakeups=%d, want 4 and 4", st.Wakes, st.WakeUps)
		}
	})
}

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
				n, err := h.b.Wait(d, out[:])
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
		if n, err := h.b.Wait(0, out[:]); n != 0 || err != nil || time.Since(start) > 100*time.Millisecond {
			t.Fatalf("Wait(0): n=%d err=%v after %v", n, err, time.Since(start))
		}
	})
}

// TestStaleCompletionDropped: a completion that names a slot's previous
// generation (the slot was released and reused) is dropped and counted,
// and the op now in the slot still completes exactly once.
func TestStaleCompletionDropped(t *testing.T) {
	forEachBackend(t, nil, func(t *testing.T, h *harness) {
		old := h.submit(&evpoll.Op{Kind: evpoll.Nop}, 1)
		h.ok(1)
		cur := h.submit(&evpoll.Op{Kind: evpoll.Nop}, 2)
		if uint64(cur)&slotMask != uint64(old)&slotMask || cur == old {
			t.Fatalf("slot not reused with a new generation: old %#x new %#x", old, cur)
		}
		injectStale(t, h.b, old)
		h.ok(2)
		for i := 0; i < 3; i++ {
			h.poll(5 * time.Millisecond)
		}
		if _, ok := h.got[1]; !ok || len(h.got) != 2 {
			t.Fatalf("completions %v", h.got)
		}
		if st := h.b.Stats(); st.Stale != 1 {
			t.Fatalf("stale = %d, want 1", st.Stale)
		}
		if err := h.b.Cancel(old); !errors.Is(err, evpoll.ErrNotPending) {
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
		if err != nil {
			t.Fatal(err)
		}
		e.Opcode, e.Fd, e.UserData = opNop, -1, uint64(id)
		b.r.publish()
	case *Epoll:
		b.postPoolResult(id, 0)
	}
}

// TestCQOverflow submits 20× the CQ size of NOPs without reaping: the
// kernel's overflow list (FEAT_NODROP) must hand every one back, once.
func TestCQOverflow(t *testing.T) {
	const ops = 160
	forEachBackend(t, func(o *Options) { o.Entries, o.CQEntries = 4, 8 }, func(t *testing.T, h *harness) {
		for i := 0; i < ops; i++ {
			h.submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1))
		}
		for i := 0; i < ops; i++ {
			h.ok(evpoll.Token(i + 1))
		}
		if len(h.got) != ops || h.b.Pending() != 0 {
			t.Fatalf("got %d completions, pending %d", len(h.got), h.b.Pending())
		}
		st := h.b.Stats()
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
			h.submit(&evpoll.Op{Kind: evpoll.Nop}, evpoll.Token(i+1))
		}
		if _, err := h.b.Submit(&evpoll.Op{Kind: evpoll.Nop}, 9); !errors.Is(err, evpoll.ErrTooMany) {
			t.Fatalf("fifth op: %v, want ErrTooMany", err)
		}
		for i := 0; i < 4; i++ {
			h.ok(evpoll.Token(i + 1))
		}
		h.do(&evpoll.Op{Kind: evpoll.Nop}, 10)
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
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		sfd := h.do(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
		defer unix.Close(sfd)
		for i := 0; i < 5; i++ {
			tok := evpoll.Token(10 + i)
			h.submit(&evpoll.Op{Kind: evpoll.Recv, Fd: sfd, Buf: make([]byte, 4)}, tok)
			h.poll(0)
			conn.Write([]byte("data"))
			deadline := time.Now().Add(5 * time.Second)
			for {
				h.poll(0)
				if _, ok := h.got[tok]; ok {
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
			h.b.Wake()
		}()
		var out [4]evpoll.Completion
		if _, err := h.b.Wait(10*time.Second, out[:]); err != nil {
			t.Fatal(err)
		}
		if d := <-gcTook; d > 2*time.Second {
			t.Fatalf("two GCs took %v while a worker was parked in Wait", d)
		}
	})
}
