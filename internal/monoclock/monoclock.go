// Package monoclock is the runtime's master clock: monotonic nanoseconds
// since the process loaded the runtime. The scheduler's timers and the VM
// loop's time.now read the same clock, so a deadline a task computes
// from time.now is on the timer wheel's scale.
package monoclock

import "time"

// epoch is the clock's zero.
var epoch = time.Now()

// Now returns the nanoseconds since the clock's zero (monotonic).
func Now() int64 { return int64(time.Since(epoch)) }
