package sched

import (
	"testing"
	"unsafe"

	"github.com/jadevm/jade/vmloop"
)

// TestRecordSizes guards the parked-task memory target (≤ 512 B resident
// per parked task at 1M waiters, BenchmarkParkedTaskBytes with
// JADE_PARKED_N=1000000): a parked task is its Task record, its Exec and
// small stacks, and a field added in the wrong place moves a record into
// the next allocation size class (a one-byte flag after an 8-byte field
// costs 8 B of padding, and the next class up costs 32). Task, with its
// Exec inside, is exactly the 320-byte class (Exec 208 B of it): a new
// field needs 8 bytes found elsewhere (a flag goes into Task.flags).
// Change the limits here only together with that benchmark's figure and
// TestParkedTaskParts.
func TestRecordSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, max uintptr
	}{
		{"Task", unsafe.Sizeof(Task{}), 320},
		{"vmloop.Exec", unsafe.Sizeof(vmloop.Exec{}), 208},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d B, over its %d B budget: look for padding (put small fields beside other small fields)", c.name, c.size, c.max)
		}
	}
}
