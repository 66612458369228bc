package sched

import (
	"testing"
	"unsafe"

	"github.com/jadevm/jade/vmloop"
)

// TestRecordSizes guards the parked-task memory target (≤ 512 B per
// parked task, BenchmarkParkedTaskBytes): a parked task is its Task record,
// its Exec and small stacks, and a field added in the wrong place moves a
// record into the next allocation size class. (A one-byte flag put after an
// 8-byte field once grew the Task record 160 → 168 B, allocated as 176 B:
// 509 → 525 B per parked task.) Change the limits here only together with
// that benchmark's figure.
func TestRecordSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, max uintptr
	}{
		{"Task", unsafe.Sizeof(Task{}), 160},
		{"vmloop.Exec", unsafe.Sizeof(vmloop.Exec{}), 224},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d B, over its %d B budget: look for padding (put small fields beside other small fields)", c.name, c.size, c.max)
		}
	}
}
