package timerwheel

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is the deterministic clock of these tests: time moves only when
// the test says so.
type fakeClock struct{ now int64 }

func (c *fakeClock) Now() int64                { return c.now }
func (c *fakeClock) Add(d time.Duration) int64 { c.now += int64(d); return c.now }
func (c *fakeClock) Set(t int64) int64         { c.now = t; return t }

const ms = int64(time.Millisecond)

func newWheel(t testing.TB, cfg TimerWheelConfig, now int64) *Wheel {
	t.Helper()
	w, err := New(cfg, now)
	require.NoError(t, err)
	return w
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate(), "default config")
	if got, want := DefaultConfig().Range(), time.Duration(1<<36)*time.Millisecond; got != want {
		t.Errorf("default Range = %v, want %v", got, want)
	}
	bad := []struct {
		cfg  TimerWheelConfig
		want string
	}{
		{TimerWheelConfig{}, "Levels"},
		{TimerWheelConfig{Levels: 0, SlotsPerLevel: 64, Tick: 1}, "Levels"},
		{TimerWheelConfig{Levels: 2, SlotsPerLevel: 48, Tick: 1}, "SlotsPerLevel"},
		{TimerWheelConfig{Levels: 2, SlotsPerLevel: 128, Tick: 1}, "SlotsPerLevel"},
		{TimerWheelConfig{Levels: 2, SlotsPerLevel: 1, Tick: 1}, "SlotsPerLevel"},
		{TimerWheelConfig{Levels: 2, SlotsPerLevel: 64, Tick: 0}, "Tick"},
		{TimerWheelConfig{Levels: 2, SlotsPerLevel: 64, Tick: -time.Second}, "Tick"},
		{TimerWheelConfig{Levels: 11, SlotsPerLevel: 64, Tick: 1}, "bits"},
		{TimerWheelConfig{Levels: 63, SlotsPerLevel: 2, Tick: 1}, "bits"},
	}
	for _, c := range bad {
		err := c.cfg.Validate()
		if err == nil {
			t.Errorf("%+v: no error", c.cfg)
			continue
		}
		if !strings.HasPrefix(err.Error(), "timerwheel: config: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %q, want prefix %q mentioning %q", c.cfg, err, "timerwheel: config: ", c.want)
		}
		if _, err2 := New(c.cfg, 0); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("New(%+v) = %v, want %v", c.cfg, err2, err)
		}
	}
	if r := (TimerWheelConfig{Levels: 31, SlotsPerLevel: 4, Tick: time.Hour}).Range(); r != math.MaxInt64 {
		t.Errorf("saturating Range = %v", r)
	}
}

func TestEmptyWheel(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	if d, ok := w.NextDeadline(); ok {
		t.Fatalf("empty wheel NextDeadline = %d, true", d)
	}
	if got := w.Advance(math.MaxInt64, nil); len(got) != 0 {
		t.Fatalf("empty wheel fired %v", got)
	}
	if w.Len() != 0 {
		t.Fatal("Len != 0")
	}
}

// The tick bounds bookkeeping, not precision: a deadline inside a tick is
// reported and fired exactly.
func TestExactDeadline(t *testing.T) {
	c := &fakeClock{now: 5 * ms}
	w := newWheel(t, DefaultConfig(), c.now)
	d := c.now + 1500*int64(time.Microsecond) // 1.5 ms ahead: mid-tick
	h := w.Insert(d, 7)
	if got, ok := w.NextDeadline(); !ok || got != d {
		t.Fatalf("NextDeadline = %d,%v, want %d", got, ok, d)
	}
	if got := w.Advance(d-1, nil); len(got) != 0 {
		t.Fatalf("fired 1 ns early: %v", got)
	}
	if got, _ := w.NextDeadline(); got != d {
		t.Fatalf("NextDeadline after early Advance = %d, want %d", got, d)
	}
	got := w.Advance(d, nil)
	if len(got) != 1 || got[0] != (Expired{Deadline: d, Payload: 7, Handle: h}) {
		t.Fatalf("Advance(d) = %v", got)
	}
}

// Entries fire in deadline order within one Advance, ties in insertion order
// (a Reset counts as a new insertion).
func TestFireOrder(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	w.Insert(50*ms, 1)
	w.Insert(20*ms, 2)
	hb := w.Insert(20*ms, 3)
	w.Insert(20*ms, 4)
	w.Insert(10*ms+1, 5)
	w.Insert(200*ms, 6) // another level
	w.Insert(20*ms, 7)
	w.Reset(hb, 20*ms) // now after 7
	var order []uint64
	for _, e := range w.Advance(time.Second.Nanoseconds(), nil) {
		order = append(order, e.Payload)
	}
	want := []uint64{5, 2, 4, 7, 3, 1, 6}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}

// Deadlines in the past (even before the wheel's origin) fire on the next
// Advance, also one at the same time as the previous.
func TestPastDeadline(t *testing.T) {
	c := &fakeClock{now: 100 * ms}
	w := newWheel(t, DefaultConfig(), c.now)
	w.Advance(c.Add(time.Second), nil)
	w.Insert(c.now-50*ms, 1)
	w.Insert(math.MinInt64, 2)
	w.Insert(c.now, 3)
	if d, _ := w.NextDeadline(); d != math.MinInt64 {
		t.Fatalf("NextDeadline = %d", d)
	}
	got := w.Advance(c.now, nil)
	if len(got) != 3 || got[0].Payload != 2 || got[1].Payload != 1 || got[2].Payload != 3 {
		t.Fatalf("Advance = %v", got)
	}
}

func TestAdvanceBackwardsNoop(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	w.Advance(100*ms, nil)
	w.Insert(90*ms, 1) // past
	if got := w.Advance(50*ms, nil); len(got) != 0 {
		t.Fatalf("backwards Advance fired %v", got)
	}
	if w.Now() != 100*ms {
		t.Fatalf("Now = %d after backwards Advance", w.Now())
	}
	if got := w.Advance(100*ms, nil); len(got) != 1 {
		t.Fatalf("Advance(same) fired %v", got)
	}
}

func TestCancelEdgeCases(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	h := w.Insert(10*ms, 1)
	require.True(t, w.Cancel(h), "first cancel failed")
	if w.Cancel(h) || w.CancelRemote(h) {
		t.Fatal("double cancel succeeded")
	}
	if w.Reset(h, 20*ms) {
		t.Fatal("reset of cancelled timer succeeded")
	}
	// The freed entry is reused; the old handle must not touch the new timer.
	h2 := w.Insert(10*ms, 2)
	if h2.index() != h.index() || h2 == h {
		t.Fatalf("expected reuse of index %d with a new generation, got %#x vs %#x", h.index(), h2, h)
	}
	if w.Cancel(h) || w.CancelRemote(h) || w.Reset(h, 0) {
		t.Fatal("stale handle affected a reused entry")
	}
	got := w.Advance(10*ms, nil)
	if len(got) != 1 || got[0].Handle != h2 {
		t.Fatalf("Advance = %v", got)
	}
	// Cancel after fire.
	if w.Cancel(h2) || w.CancelRemote(h2) {
		t.Fatal("cancel after fire succeeded")
	}
	// Zero, even-generation and out-of-range handles.
	for _, bad := range []Handle{0, makeHandle(0, 2), makeHandle(1<<30, 1), makeHandle(0, 0xffffffff)} {
		if w.Cancel(bad) || w.CancelRemote(bad) || w.Reset(bad, 0) {
			t.Fatalf("handle %#x accepted", bad)
		}
	}
	if s := w.Stats(); s.Inserts != 2 || s.Cancels != 1 || s.Fires != 1 || s.Pending != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// A timer 10 s ahead costs one wake-up when the owner parks until
// NextDeadline, and at most one move per level it cascades through even when
// the owner advances every millisecond.
func TestTenSecondTimerCascades(t *testing.T) {
	cfg := DefaultConfig()
	for _, parked := range []bool{true, false} {
		c := &fakeClock{now: 123456789}
		w := newWheel(t, cfg, c.now)
		d := c.now + int64(10*time.Second) + 777
		w.Insert(d, 1)
		wakeups := 0
		var fired []Expired
		for len(fired) == 0 {
			if parked {
				next, ok := w.NextDeadline()
				require.True(t, ok, "lost the timer")
				c.Set(next)
			} else {
				c.Add(time.Millisecond)
			}
			wakeups++
			fired = w.Advance(c.now, fired)
		}
		if fired[0].Deadline != d || (parked && c.now != d) || c.now-d >= ms {
			t.Fatalf("parked=%v: fired %v at %d, want %d", parked, fired, c.now, d)
		}
		s := w.Stats()
		// 10 s = 10000 ticks: filed in level 2 (64² = 4096 ≤ 10000 < 64³),
		// so at most 2 cascades (2→1, 1→0).
		if s.Cascades > 2 {
			t.Errorf("parked=%v: %d cascades for one 10 s timer, want ≤ 2", parked, s.Cascades)
		}
		if parked && wakeups != 1 {
			t.Errorf("parked: %d wake-ups, want 1", wakeups)
		}
		t.Logf("parked=%v: wake-ups %d, cascades %d, slot scans %d", parked, wakeups, s.Cascades, s.SlotScans)
	}
}

// Deadlines beyond the range are parked in the top level and still fire at
// their exact deadline, whether time moves in small steps or one jump.
func TestBeyondRange(t *testing.T) {
	cfg := TimerWheelConfig{Levels: 2, SlotsPerLevel: 4, Tick: time.Millisecond} // range 16 ms
	for _, stepped := range []bool{true, false} {
		c := &fakeClock{}
		w := newWheel(t, cfg, 0)
		ds := []int64{1000*ms + 3, 17 * ms, 16 * ms, 333*ms + 1, math.MaxInt64}
		for i, d := range ds {
			w.Insert(d, uint64(i))
		}
		var fired []Expired
		for c.now < 2000*ms {
			if stepped {
				next, _ := w.NextDeadline()
				c.Set(min(next, c.now+3*ms))
			} else {
				c.Set(2000 * ms)
			}
			for _, e := range w.Advance(c.now, nil) {
				if e.Deadline > c.now || (stepped && e.Deadline != c.now) {
					t.Fatalf("stepped=%v: fired %v at %d", stepped, e, c.now)
				}
				fired = append(fired, e)
			}
		}
		if len(fired) != 4 || fired[0].Deadline != 16*ms || fired[3].Deadline != 1000*ms+3 {
			t.Fatalf("stepped=%v: fired %v", stepped, fired)
		}
		if d, ok := w.NextDeadline(); !ok || d != math.MaxInt64 {
			t.Fatalf("NextDeadline = %d,%v", d, ok)
		}
		if got := w.Advance(math.MaxInt64, nil); len(got) != 1 || got[0].Payload != 4 {
			t.Fatalf("Advance(MaxInt64) = %v", got)
		}
	}
}

// A jump of any size costs one sweep, not a walk over empty slots.
func TestHugeJump(t *testing.T) {
	w := newWheel(t, TimerWheelConfig{Levels: 2, SlotsPerLevel: 2, Tick: 1}, 0)
	for i := int64(0); i < 1000; i++ {
		w.Insert(i*1_000_000_007, uint64(i))
	}
	start := time.Now()
	got := w.Advance(math.MaxInt64-1, nil)
	require.Len(t, got, 1000, "fired %d", len(got))
	for i, e := range got {
		if e.Payload != uint64(i) {
			t.Fatalf("fire %d = %v", i, e)
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("huge jump took %v", el)
	}
}

// Steady-state insert, cancel, reset and advance allocate nothing.
func TestNoAllocs(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	dst := make([]Expired, 0, 64)
	now := int64(0)
	// Warm the slab and the scratch buffer.
	for i := range 1000 {
		w.Insert(now+int64(i%50)*ms, uint64(i))
	}
	dst = w.Advance(now+100*ms, dst[:0])
	now += 100 * ms
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		h := w.Insert(now+int64(i%5000)*ms, uint64(i))
		h2 := w.Insert(now+int64(i%7)*ms, uint64(i))
		w.Reset(h, now+int64(i%300)*ms)
		w.Cancel(h)
		w.CancelRemote(h2)
		w.NextDeadline()
		now += ms
		dst = w.Advance(now, dst[:0])
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per op, want 0", allocs)
	}
}

// The slab costs 48 B per pending timer plus page directories.
func TestBytesPerTimer(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("memory measurement")
	}
	const n = 200_000
	hs := make([]Handle, n)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	w := newWheel(t, DefaultConfig(), 0)
	for i := range hs {
		hs[i] = w.Insert(int64(i%3_600_000)*ms, uint64(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	per := float64(int64(m1.HeapInuse)-int64(m0.HeapInuse)) / n
	t.Logf("%.1f B/timer (HeapInuse delta)", per)
	if per > 64 {
		t.Errorf("%.1f B per pending timer, want ≤ 64", per)
	}
	runtime.KeepAlive(w)
}

func TestStats(t *testing.T) {
	w := newWheel(t, DefaultConfig(), 0)
	hs := make([]Handle, 10)
	for i := range hs {
		hs[i] = w.Insert(int64(i+1)*100*ms, uint64(i))
	}
	w.Cancel(hs[0])
	w.CancelRemote(hs[1])
	w.Reset(hs[2], 5*ms)
	w.Advance(550*ms, nil)
	s := w.Stats()
	want := Stats{Inserts: 10, Resets: 1, Cancels: 2, RemoteCancels: 1, Fires: 3, Pending: 5, SlabEntries: 10}
	s.Cascades, s.SlotScans, s.ScanSteps = 0, 0, 0
	if s != want {
		t.Fatalf("stats %+v, want %+v", s, want)
	}
}
