package vmloop

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestBudgetTakeNeverRefusesWhatFits: goroutines reserve and give back
// 64 KiB against a nearly empty 1 GiB budget while others keep asking for
// more than is left. A reservation that fits is never refused: a Take
// that cannot fit must not push the count past the limit, even for a
// moment.
func TestBudgetTakeNeverRefusesWhatFits(t *testing.T) {
	const limit, small = 1 << 30, 64 << 10
	b := NewBudget(limit)
	b.Force(4 << 20) // nearly empty
	var refused, overTaken atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() { // reservations that never fit
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if b.Take(limit) {
					overTaken.Add(1)
				}
			}
		}()
	}
	var takers sync.WaitGroup
	for range 4 {
		takers.Add(1)
		go func() {
			defer takers.Done()
			for range 20000 {
				if !b.Take(small) {
					refused.Add(1)
					continue
				}
				b.Give(small)
			}
		}()
	}
	takers.Wait()
	close(stop)
	wg.Wait()
	require.Zero(t, overTaken.Load(), "a reservation past the limit was granted")
	require.Zero(t, refused.Load(), "64 KiB reservations refused with about 1 GiB free")
	require.Equal(t, int64(4<<20), b.Used())
	require.True(t, b.Take(limit-(4<<20)), "the whole rest fits")
	require.False(t, b.Take(1))
}

// TestAllocFailNamesTheBudget: an allocation refused by the engine's
// budget names the budget even when the budget has room again by the time
// the trap is written (it said "handle table full").
func TestAllocFailNamesTheBudget(t *testing.T) {
	var h heap
	mem := NewBudget(1 << 20)
	h.init(1, boundsFor(1<<30, mem))
	mem.Force(1 << 20)
	require.Zero(t, h.alloc(KindBytes, 64<<10))
	mem.Give(1 << 20) // another task gave back what it held
	ti := h.allocFail(64 << 10)
	require.Equal(t, TrapHeapLimit, ti.Code)
	require.True(t, strings.Contains(ti.Msg, "memory limit"), ti.Msg)
	require.Equal(t, int64(HeapGrant), h.granted, "writing the trap takes nothing from the budget (the grant a heap begins with)")
}

// TestGrantsTakeNothingFromTheBudget: a task whose stacks fit StackGrant
// and whose objects fit HeapGrant (an event reference or two) leaves the
// engine's budget untouched from its start to its end (the scheduler's
// fixed share covers them); one that passes them is counted for what
// passes, and gives it all back.
func TestGrantsTakeNothingFromTheBudget(t *testing.T) {
	p := itProg(t, nil, itFn("small", "(i64)->i64", 2, "ret r0"), itFib(0), itDown(2))
	b := NewBudget(1 << 30)
	lim := DefaultLimits
	lim.Memory = b
	// What the budget counts of e's stacks: what passes StackGrant.
	counted := func(e *Exec) int64 {
		return overGrant(int64(cap(e.regs))*8 + int64(cap(e.frames))*int64(unsafe.Sizeof(frame{})))
	}

	e, err := NewExec(p, p.FuncIndex("small"), []Value{I64(7)}, lim, 1)
	require.NoError(t, err)
	if headroom(2) == 2 { // the fast build; jadecheck gives every frame MaxRegs
		require.Zero(t, counted(e), "small stacks: within StackGrant")
	}
	require.Equal(t, counted(e), b.Used())
	for range 2 {
		_, err := e.heap.importShared(KindEvent, new(int))
		require.NoError(t, err)
	}
	require.Equal(t, int64(2*objHeader), e.heap.bytes)
	require.Equal(t, counted(e), b.Used(), "two event references: within HeapGrant")
	require.Equal(t, SigCompleted, itRun(t, e, 1000))
	e.Free()
	require.Zero(t, b.Used())

	e, err = NewExec(p, p.FuncIndex("down"), []Value{I64(30)}, lim, 1)
	require.NoError(t, err)
	require.Equal(t, SigCompleted, itRun(t, e, 1<<20))
	require.Positive(t, counted(e), "deep stacks pass StackGrant")
	require.Equal(t, counted(e), b.Used(), "and are counted for what passes it")
	e.Free()
	require.Zero(t, b.Used(), "every byte balanced")
}
