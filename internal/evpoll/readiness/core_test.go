//go:build linux || darwin || freebsd

package readiness

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// fakeOS is an OS half without a kernel poller: a descriptor is ready for
// as many ops as the test grants, edges and wake kicks arrive on channels.
type fakeOS struct {
	mu         sync.Mutex
	grant      map[int]int // ops each descriptor can complete now
	tries      int
	unregister []int
	kicks      int
	kick       chan struct{}
	edges      chan Event
	files      map[int]bool // descriptors Register calls files (set before use)
}

func newFake() *fakeOS {
	return &fakeOS{grant: map[int]int{}, kick: make(chan struct{}, 1), edges: make(chan Event, 16)}
}

func (f *fakeOS) Register(fd int) (bool, error) { return f.files[fd], nil }

func (f *fakeOS) Unregister(fd int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unregister = append(f.unregister, fd)
}

func (f *fakeOS) Try(s *Slot) (int32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.grant[s.Fd] == 0 {
		return 0, false
	}
	f.grant[s.Fd]--
	return 1, true
}

func (f *fakeOS) ConnectStart(*Slot) (int32, bool) { return 0, false }

func (f *fakeOS) Kick() {
	f.mu.Lock()
	f.kicks++
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *fakeOS) Drain() {}

func (f *fakeOS) Poll(evs []Event, rem time.Duration) (int, error) {
	var timer <-chan time.Time
	if rem >= 0 {
		timer = time.After(rem)
	}
	select {
	case <-f.kick:
		evs[0] = Event{Flags: EvWake}
	case evs[0] = <-f.edges:
	case <-timer:
		return 0, nil
	}
	return 1, nil
}

// ready grants fd n more ops and reports a read edge.
func (f *fakeOS) ready(fd, n int) {
	f.mu.Lock()
	f.grant[fd] += n
	f.mu.Unlock()
	f.edges <- Event{Fd: int32(fd), Flags: EvRead}
}

func open(t *testing.T) (*Core, *fakeOS) {
	f := newFake()
	c := New(Config{Name: "fake", PollOp: "poll", MaxInFlight: 8, PoolSize: 1}, f)
	t.Cleanup(func() { c.Close() })
	return c, f
}

func submit(t *testing.T, c *Core, op *evpoll.Op, tok evpoll.Token) evpoll.OpID {
	t.Helper()
	id, err := c.Submit(op, tok)
	require.NoError(t, err)
	return id
}

func wait(t *testing.T, c *Core, want int) []evpoll.Completion {
	t.Helper()
	var got []evpoll.Completion
	out := make([]evpoll.Completion, 4)
	for deadline := time.Now().Add(5 * time.Second); len(got) < want; {
		if time.Now().After(deadline) {
			t.Fatalf("got %d of %d completions", len(got), want)
		}
		n, err := c.Wait(100*time.Millisecond, out)
		require.NoError(t, err)
		got = append(got, out[:n]...)
	}
	return got
}

// TestFIFO: ops that would block queue in order; an edge runs the queue,
// and an op behind a waiting one is not tried at Submit.
func TestFIFO(t *testing.T) {
	c, f := open(t)
	submit(t, c, &evpoll.Op{Kind: evpoll.Recv, Fd: 5}, 1)
	submit(t, c, &evpoll.Op{Kind: evpoll.Recv, Fd: 5}, 2)
	if f.tries != 1 || c.Pending() != 2 {
		t.Fatalf("tries %d, pending %d", f.tries, c.Pending())
	}
	f.ready(5, 2)
	got := wait(t, c, 2)
	if got[0].Token != 1 || got[1].Token != 2 || got[0].Res != 1 {
		t.Fatalf("completions %+v", got)
	}
}

// TestCancel: a queued op ends once, cancelled; Cancel of a finished op is
// ErrNotPending, before and after Wait returned it.
func TestCancel(t *testing.T) {
	c, _ := open(t)
	id := submit(t, c, &evpoll.Op{Kind: evpoll.Recv, Fd: 5}, 1)
	require.NoError(t, c.Cancel(id))
	if err := c.Cancel(id); !errors.Is(err, evpoll.ErrNotPending) {
		t.Fatalf("second cancel: %v", err)
	}
	if got := wait(t, c, 1); !got[0].Cancelled() || !errors.Is(got[0].Err(), syscall.ECANCELED) {
		t.Fatalf("completion %+v", got[0])
	}
	if err := c.Cancel(id); !errors.Is(err, evpoll.ErrNotPending) {
		t.Fatalf("cancel after the completion: %v", err)
	}
}

// TestCloseAndForget: a Close op and Forget fail the ops queued on their
// descriptor and unregister it.
func TestCloseAndForget(t *testing.T) {
	c, f := open(t)
	var p [2]int
	require.NoError(t, unix.Pipe(p[:]))
	defer unix.Close(p[1])
	submit(t, c, &evpoll.Op{Kind: evpoll.Recv, Fd: p[0]}, 1)
	submit(t, c, &evpoll.Op{Kind: evpoll.Close, Fd: p[0]}, 2)
	submit(t, c, &evpoll.Op{Kind: evpoll.Recv, Fd: 7}, 3)
	c.Forget(7)
	got := wait(t, c, 3)
	if !got[0].Cancelled() || got[1].Res != 0 || got[1].Cancelled() || !got[2].Cancelled() {
		t.Fatalf("completions %+v", got)
	}
	if len(f.unregister) != 2 || f.unregister[0] != p[0] || f.unregister[1] != 7 {
		t.Fatalf("unregistered %v", f.unregister)
	}
}

// TestWakeCoalesced: two Wakes make one kick and one early Wait return.
func TestWakeCoalesced(t *testing.T) {
	c, f := open(t)
	for range 2 {
		require.NoError(t, c.Wake())
	}
	if n, err := c.Wait(-1, make([]evpoll.Completion, 1)); n != 0 || err != nil {
		t.Fatalf("Wait after Wake: %d, %v", n, err)
	}
	if st := c.Stats(); st.Wakes != 1 || st.WakeUps != 1 || f.kicks != 1 {
		t.Fatalf("wakes %d, wake-ups %d, kicks %d", st.Wakes, st.WakeUps, f.kicks)
	}
}

// TestCloseUnblocksWait: Close brings a blocked Wait back with ErrClosed,
// and only the first Close reports true.
func TestCloseUnblocksWait(t *testing.T) {
	c, _ := open(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Wait(-1, make([]evpoll.Completion, 1))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if !c.Close() || c.Close() {
		t.Fatal("Close: want true, then false")
	}
	if err := <-errc; !errors.Is(err, evpoll.ErrClosed) {
		t.Fatalf("Wait: %v", err)
	}
}

// TestCancelQueuedPoolJob: with the pool's one goroutine held by a
// blocking read, a Cancel of a file read queued behind it completes at
// once, cancelled, and the read never runs; the running read cannot be
// interrupted and completes with its real result.
func TestCancelQueuedPoolJob(t *testing.T) {
	c, f := open(t)
	var busy, queued [2]int // blocking pipes the core takes for files
	require.NoError(t, unix.Pipe(busy[:]))
	require.NoError(t, unix.Pipe(queued[:]))
	for _, fd := range append(busy[:], queued[:]...) {
		defer unix.Close(fd)
	}
	f.files = map[int]bool{busy[0]: true, queued[0]: true}
	running := submit(t, c, &evpoll.Op{Kind: evpoll.Read, Fd: busy[0], Buf: make([]byte, 4), Offset: -1}, 1)
	id := submit(t, c, &evpoll.Op{Kind: evpoll.Read, Fd: queued[0], Buf: make([]byte, 4), Offset: -1}, 2)
	require.Eventually(t, func() bool {
		c.g.Mu.Lock()
		defer c.g.Mu.Unlock()
		_, s := c.slots.Lookup(running)
		return s.wait == waitPoolRun
	}, 5*time.Second, time.Millisecond, "the first read never started")
	require.NoError(t, c.Cancel(id))
	got := wait(t, c, 1)
	require.Equal(t, evpoll.Token(2), got[0].Token)
	require.True(t, got[0].Cancelled() && errors.Is(got[0].Err(), syscall.ECANCELED), "queued read: %+v", got[0])

	require.NoError(t, c.Cancel(running))
	_, err := unix.Write(queued[1], []byte("q"))
	require.NoError(t, err)
	_, err = unix.Write(busy[1], []byte("b"))
	require.NoError(t, err)
	got = wait(t, c, 1)
	require.Equal(t, evpoll.Completion{Token: 1, Res: 1}, got[0], "the running read ends with its result")
	// One more job: the pool's one goroutine takes jobs in order, so the
	// cancelled read's turn has passed when this one completes, and the
	// byte is still in its pipe.
	_, err = unix.Write(busy[1], []byte("c"))
	require.NoError(t, err)
	submit(t, c, &evpoll.Op{Kind: evpoll.Read, Fd: busy[0], Buf: make([]byte, 4), Offset: -1}, 3)
	require.Equal(t, evpoll.Completion{Token: 3, Res: 1}, wait(t, c, 1)[0])
	require.NoError(t, unix.SetNonblock(queued[0], true))
	n, err := unix.Read(queued[0], make([]byte, 4))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the cancelled read ran")
}
