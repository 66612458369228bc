package timerwheel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// refTimer is one pending timer of the reference model.
type refTimer struct {
	deadline int64
	seq      uint64
	payload  uint64
	h        Handle
}

// refModel is the obviously-correct reference: a slice kept sorted by
// (deadline, insertion sequence).
type refModel struct {
	timers []refTimer
	seq    uint64
	now    int64
}

func (m *refModel) cmp(a, b refTimer) int {
	if a.deadline != b.deadline {
		if a.deadline < b.deadline {
			return -1
		}
		return 1
	}
	if a.seq < b.seq {
		return -1
	} else if a.seq > b.seq {
		return 1
	}
	return 0
}

func (m *refModel) insert(d int64, payload uint64, h Handle) {
	m.seq++
	t := refTimer{deadline: d, seq: m.seq, payload: payload, h: h}
	i, _ := slices.BinarySearchFunc(m.timers, t, m.cmp)
	m.timers = slices.Insert(m.timers, i, t)
}

func (m *refModel) find(h Handle) int {
	for i, t := range m.timers {
		if t.h == h {
			return i
		}
	}
	return -1
}

func (m *refModel) cancel(h Handle) bool {
	i := m.find(h)
	if i < 0 {
		return false
	}
	m.timers = slices.Delete(m.timers, i, i+1)
	return true
}

func (m *refModel) reset(h Handle, d int64) bool {
	i := m.find(h)
	if i < 0 {
		return false
	}
	t := m.timers[i]
	m.timers = slices.Delete(m.timers, i, i+1)
	m.insert(d, t.payload, h)
	return true
}

func (m *refModel) advance(now int64) []Expired {
	if now < m.now {
		return nil
	}
	m.now = now
	n := 0
	for n < len(m.timers) && m.timers[n].deadline <= now {
		n++
	}
	out := make([]Expired, n)
	for i, t := range m.timers[:n] {
		out[i] = Expired{Deadline: t.deadline, Payload: t.payload, Handle: t.h}
	}
	m.timers = slices.Delete(m.timers, 0, n)
	return out
}

func (m *refModel) nextDeadline() (int64, bool) {
	if len(m.timers) == 0 {
		return 0, false
	}
	return m.timers[0].deadline, true
}

// opSource feeds the random driver: math/rand for the long model test,
// fuzz bytes for FuzzWheel.
type opSource interface {
	intn(n int) int
	u64() uint64
	done() bool
}

type randSource struct {
	r     *rand.Rand
	steps int
}

func (s *randSource) intn(n int) int { return s.r.IntN(n) }
func (s *randSource) u64() uint64    { return s.r.Uint64() }
func (s *randSource) done() bool     { s.steps--; return s.steps < 0 }

type byteSource struct{ b []byte }

func (s *byteSource) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}
func (s *byteSource) intn(n int) int {
	return int(binary.LittleEndian.Uint16([]byte{s.next(), s.next()})) % n
}
func (s *byteSource) u64() uint64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(s.next())
	}
	return v
}
func (s *byteSource) done() bool { return len(s.b) == 0 }

// modelConfigs are the wheel shapes the model test runs: the default, and
// small ones that make cascades, wrap-around and beyond-range parking common.
var modelConfigs = []TimerWheelConfig{
	DefaultConfig(),
	{Levels: 3, SlotsPerLevel: 4, Tick: 10},
	{Levels: 2, SlotsPerLevel: 2, Tick: 7},
	{Levels: 1, SlotsPerLevel: 8, Tick: 1},
	{Levels: 4, SlotsPerLevel: 64, Tick: 3},
	{Levels: 31, SlotsPerLevel: 4, Tick: 1}, // 62-bit range
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

// scaled draws an offset in [0, Tick·SlotsPerLevel^l) for a level scale l
// (l = Levels reaches beyond the range).
func scaled(src opSource, cfg TimerWheelConfig, l int) int64 {
	b := bits.TrailingZeros(uint(cfg.SlotsPerLevel))
	hi, lo := bits.Mul64(uint64(cfg.Tick), 1<<uint(min(b*l, 62)))
	if hi != 0 || lo > 1<<62 {
		lo = 1 << 62
	}
	return int64(src.u64() % lo)
}

// offset draws a deadline offset at one of several scales relative to the
// wheel's tick and range, including zero, past, tie-prone, range-boundary
// and huge ones.
func offset(src opSource, cfg TimerWheelConfig) int64 {
	tick := int64(cfg.Tick)
	rng := int64(cfg.Range())
	switch src.intn(20) {
	case 0:
		return 0
	case 1:
		return -int64(src.intn(1000)) * tick // past
	case 2:
		return int64(src.u64() >> 1) // huge, beyond range
	case 3: // around (multiples of) the range boundary
		return satAdd(rng, int64(src.intn(1000))-500)*int64(1+src.intn(3)) + int64(src.intn(int(min(tick, 1<<20))))
	case 4:
		return int64(src.intn(4)) * tick // tie-prone
	case 5:
		return int64(src.intn(int(min(tick, 1<<20)))) // inside one tick
	default:
		return scaled(src, cfg, src.intn(cfg.Levels+1))
	}
}

// nextNow draws how far Advance moves: mostly short relative to the deadlines
// so that timers accumulate, sometimes exactly to the next deadline,
// sometimes backwards, rarely across the whole range.
func nextNow(src opSource, cfg TimerWheelConfig, m *refModel) int64 {
	switch r := src.intn(400); {
	case r < 40: // backwards or same
		return m.now - int64(src.intn(3))*int64(cfg.Tick)
	case r < 100: // exactly to the next deadline
		if d, ok := m.nextDeadline(); ok && d > m.now {
			return d
		}
		return m.now
	case r < 103: // across the range, or huge
		if src.intn(2) == 0 {
			return satAdd(m.now, int64(cfg.Range())*int64(1+src.intn(3)))
		}
		return satAdd(m.now, int64(src.u64()>>uint(1+src.intn(40))))
	default: // short: biased to low levels
		return satAdd(m.now, scaled(src, cfg, src.intn(cfg.Levels)/2+src.intn(2)))
	}
}

// runModel drives a wheel and the reference with the same random operations
// and fails at the first disagreement.
func runModel(t testing.TB, cfg TimerWheelConfig, src opSource) {
	start := int64(src.u64()>>2) - 1<<60
	if src.intn(3) == 0 {
		start = 0
	}
	w, err := New(cfg, start)
	require.NoError(t, err)
	m := &refModel{now: start}
	var handles []Handle // pending and dead, to exercise stale handles
	var dst []Expired
	for step := 0; !src.done(); step++ {
		op := src.intn(100)
		if step/1000%2 == 1 && op >= 40 && op < 75 {
			op = 0 // build-up phase: more inserts, fewer advances
		}
		switch {
		case op < 40: // insert
			d := satAdd(m.now, offset(src, cfg))
			if src.intn(50) == 0 {
				d = math.MaxInt64 - int64(src.intn(3))
			}
			p := src.u64()
			h := w.Insert(d, p)
			m.insert(d, p, h)
			handles = append(handles, h)
		case op < 55 && len(handles) > 0: // cancel, locally or remotely
			h := pick(src, handles)
			var got bool
			if src.intn(2) == 0 {
				got = w.Cancel(h)
			} else {
				got = w.CancelRemote(h)
			}
			if want := m.cancel(h); got != want {
				t.Fatalf("step %d: cancel(%#x) = %v, model %v", step, h, got, want)
			}
		case op < 62 && len(handles) > 0: // reset
			h := pick(src, handles)
			d := satAdd(m.now, offset(src, cfg))
			if got, want := w.Reset(h, d), m.reset(h, d); got != want {
				t.Fatalf("step %d: reset(%#x) = %v, model %v", step, h, got, want)
			}
		case op < 65: // forged handles are no-ops
			h := Handle(src.u64())
			if m.find(h) < 0 && (w.Cancel(h) || w.CancelRemote(h)) {
				t.Fatalf("step %d: cancel of forged handle %#x succeeded", step, h)
			}
		case op < 90: // advance
			now := nextNow(src, cfg, m)
			dst = w.Advance(now, dst[:0])
			want := m.advance(now)
			if len(dst) != len(want) {
				t.Fatalf("step %d: advance(%d): fired %d, model %d\n got  %v\n want %v", step, now, len(dst), len(want), dst, want)
			}
			for i := range want {
				if dst[i] != want[i] {
					t.Fatalf("step %d: advance(%d): fire %d = %+v, model %+v", step, now, i, dst[i], want[i])
				}
			}
		default:
			if got, want := w.Len(), len(m.timers); got != want {
				t.Fatalf("step %d: Len = %d, model %d", step, got, want)
			}
		}
		gd, gok := w.NextDeadline()
		md, mok := m.nextDeadline()
		if gd != md && mok || gok != mok {
			t.Fatalf("step %d: NextDeadline = %d,%v, model %d,%v", step, gd, gok, md, mok)
		}
		if len(handles) > 4096 {
			handles = handles[len(handles)-2048:]
		}
	}
}

// pick chooses a handle, mostly a recent one (likely still pending).
func pick(src opSource, hs []Handle) Handle {
	if src.intn(4) == 0 {
		return hs[src.intn(len(hs))]
	}
	return hs[len(hs)-1-src.intn(min(len(hs), 32))]
}

func TestModelRandom(t *testing.T) {
	steps := 20000
	seeds := 8
	if testing.Short() || raceEnabled {
		steps, seeds = 4000, 3
	}
	for ci, cfg := range modelConfigs {
		for seed := range seeds {
			t.Run(fmt.Sprintf("cfg%d/seed%d", ci, seed), func(t *testing.T) {
				src := &randSource{r: rand.New(rand.NewPCG(uint64(seed), uint64(ci))), steps: steps}
				runModel(t, cfg, src)
			})
		}
	}
}

// FuzzWheel drives random operations decoded from the input against the
// reference model.
func FuzzWheel(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 10, 0, 0, 5, 9, 1, 2, 3, 4, 5, 6, 7, 8, 80, 0, 3, 0})
	f.Add([]byte("insert cancel advance reset insert insert advance advance advance"))
	seedRand := rand.New(rand.NewPCG(7, 7))
	for range 8 {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(seedRand.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		cfg := modelConfigs[int(data[0])%len(modelConfigs)]
		if data[0] >= 128 { // a tick that is not a round number
			cfg.Tick = time.Duration(1 + int(data[0])%13)
		}
		runModel(t, cfg, &byteSource{b: data[1:]})
	})
}
