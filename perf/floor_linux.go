//go:build linux

package perf

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/uring"
)

const (
	futexWait = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWake = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// futexWaitFor blocks until *w is 1, then clears it.
func futexWaitFor(w *atomic.Uint32) {
	for !w.CompareAndSwap(1, 0) {
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWait, 0, 0, 0, 0)
	}
}

// futexPost sets *w to 1 and wakes its waiter.
func futexPost(w *atomic.Uint32) {
	w.Store(1)
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWake, 1, 0, 0, 0)
}

// pinTo locks the calling goroutine to its thread and pins the thread to
// cpu (no pin when cpu < 0).
func pinTo(cpu int) {
	runtime.LockOSThread()
	if cpu >= 0 {
		var set unix.CPUSet
		set.Set(cpu)
		unix.SchedSetaffinity(0, &set)
	}
}

// twoCPUs returns two CPUs this process may run on (-1 each when it may
// not choose).
func twoCPUs() (int, int) {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return -1, -1
	}
	var cs []int
	for c := 0; c < 1024 && len(cs) < 2; c++ {
		if set.IsSet(c) {
			cs = append(cs, c)
		}
	}
	if len(cs) < 2 {
		return -1, -1
	}
	return cs[0], cs[1]
}

// futexPingPong: thread A, pinned to one CPU, wakes thread B, pinned to
// another and asleep in FUTEX_WAIT; from before A's store to B's clock
// read after its wait returns. B then wakes A back (not measured).
func futexPingPong(n int) ([]time.Time, []time.Duration, error) {
	c0, c1 := twoCPUs()
	if c0 < 0 {
		return nil, nil, fmt.Errorf("perf: futex floor: fewer than two CPUs to pin to")
	}
	var toB, toA atomic.Uint32
	var woke atomic.Int64
	base := time.Now()
	go func() {
		pinTo(c1)
		defer runtime.UnlockOSThread()
		for range n {
			futexWaitFor(&toB)
			woke.Store(int64(time.Since(base)))
			futexPost(&toA)
		}
	}()
	pinTo(c0)
	defer runtime.UnlockOSThread()
	starts, durs := make([]time.Time, 0, n), make([]time.Duration, 0, n)
	for range n {
		time.Sleep(50 * time.Microsecond) // B is asleep in the kernel
		t0 := time.Now()
		futexPost(&toB)
		futexWaitFor(&toA)
		starts = append(starts, t0)
		durs = append(durs, time.Duration(woke.Load())-t0.Sub(base))
	}
	return starts, durs, nil
}

// uringNops: NOPs submitted and reaped one at a time on a ring of a
// locked thread (the cost a worker's backend adds to every operation).
func uringNops(n int) ([]time.Time, []time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, err := uring.OpenRing(uring.Options{Entries: 64})
	if err != nil {
		return nil, nil, fmt.Errorf("perf: io_uring floor: %w", err)
	}
	defer r.Close()
	var out [4]evpoll.Completion
	op := &evpoll.Op{Kind: evpoll.Nop}
	starts, durs := make([]time.Time, 0, n), make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := r.Submit(op, 1); err != nil {
			return nil, nil, fmt.Errorf("perf: io_uring floor: %w", err)
		}
		for got := 0; got == 0; {
			if got, err = r.Wait(time.Second, out[:]); err != nil {
				return nil, nil, fmt.Errorf("perf: io_uring floor: %w", err)
			}
		}
		starts, durs = append(starts, t0), append(durs, time.Since(t0))
	}
	return starts, durs, nil
}
