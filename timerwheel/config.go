package timerwheel

import (
	"fmt"
	"math/bits"
	"time"
)

// TimerWheelConfig parameterises one wheel (and therefore every shard of an
// engine's wheel). It is the timerWheelConfig of the engine runtime
// configuration (spec §4.2, S-15); the number of levels and slots is not a
// language contract (spec §4.3).
//
// The wheel covers SlotsPerLevel^Levels ticks ahead of its current tick;
// later deadlines are parked in the top level and re-filed when that slot is
// reached (see the package documentation). The tick bounds bookkeeping, not
// precision: entries keep their exact deadline.
type TimerWheelConfig struct {
	// Levels is the number of wheel levels, at least 1.
	Levels int
	// SlotsPerLevel is a power of two in [2, 64], so that one uint64 holds
	// the occupancy bitmap of a level.
	SlotsPerLevel int
	// Tick is the width of a level-0 slot. It must be positive.
	Tick time.Duration
}

// maxRangeBits bounds Levels*log2(SlotsPerLevel) so that tick arithmetic on
// uint64 never overflows (ticks are clamped to 2^62-1, the range adds at most
// 2^62).
const maxRangeBits = 62

// DefaultConfig returns the documented default: 6 levels of 64 slots with a
// 1 ms tick, which covers 2^36 ms ≈ 2.2 years (the Tokio layout, see
// notes/scheduler-anchors.md §1.5). Level l has slots of 64^l ms: 1 ms,
// 64 ms, ≈4.1 s, ≈4.4 min, ≈4.7 h, ≈12.4 days.
func DefaultConfig() TimerWheelConfig {
	return TimerWheelConfig{Levels: 6, SlotsPerLevel: 64, Tick: time.Millisecond}
}

// Validate reports whether c describes a usable wheel. Errors read
// "timerwheel: config: <cause>".
func (c TimerWheelConfig) Validate() error {
	if c.Levels < 1 {
		return fmt.Errorf("timerwheel: config: Levels must be at least 1, got %d", c.Levels)
	}
	s := c.SlotsPerLevel
	if s < 2 || s > 64 || s&(s-1) != 0 {
		return fmt.Errorf("timerwheel: config: SlotsPerLevel must be a power of two in [2, 64], got %d", s)
	}
	if c.Tick <= 0 {
		return fmt.Errorf("timerwheel: config: Tick must be positive, got %v", c.Tick)
	}
	b := bits.TrailingZeros(uint(s))
	if c.Levels > maxRangeBits || c.Levels*b > maxRangeBits {
		return fmt.Errorf("timerwheel: config: Levels×log2(SlotsPerLevel) = %d×%d exceeds %d bits", c.Levels, b, maxRangeBits)
	}
	return nil
}

// Range is the span the wheel covers without parking entries in the top
// level: Tick × SlotsPerLevel^Levels (saturating at the largest Duration).
// c must be valid.
func (c TimerWheelConfig) Range() time.Duration {
	b := bits.TrailingZeros(uint(c.SlotsPerLevel)) * c.Levels
	hi, lo := bits.Mul64(uint64(c.Tick), 1<<uint(b))
	if hi != 0 || lo > 1<<63-1 {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(lo)
}
