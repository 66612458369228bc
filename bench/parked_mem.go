package bench

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/vmloop"
)

// ParkedMem is what one parked waiter costs, three ways.
type ParkedMem struct {
	// Heap is the Go heap in use plus goroutine stacks after two GCs
	// (inUse): what the runtime's data structures hold.
	Heap float64
	// RSS is the process's resident set after GC with freed memory given
	// back to the OS (debug.FreeOSMemory), above the same figure before
	// parking: what the waiters cost the machine in steady state. 0 where
	// /proc/self/statm is absent.
	RSS float64
	// PeakRSS is the resident high-water mark while parking and waking
	// every waiter (a broadcast, and the waker's handle table), above the
	// resident set before parking. 0 where the peak cannot be reset and
	// read (/proc/self/clear_refs, VmHWM).
	PeakRSS float64
}

// ParkedJadeMem parks n tasks on one event and measures them (ParkedMem),
// then releases them with one broadcast.
func (e *Env) ParkedJadeMem(n int) (ParkedMem, error) {
	gate := e.RT.NewEvent()
	var m ParkedMem
	err := measureParked(n, &m, func() error {
		if _, err := e.Run("parked", vmloop.I64(int64(n)), gate); err != nil {
			return err
		}
		s := hostbus.Scheduler(e.RT)
		deadline := time.Now().Add(time.Minute)
		for s.WaitingTasks() < int64(n) {
			if time.Now().After(deadline) {
				return fmt.Errorf("bench: parked: only %d of %d tasks parked", s.WaitingTasks(), n)
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	}, func() {
		e.RT.Broadcast(gate)
		s := hostbus.Scheduler(e.RT)
		for s.LiveTasks() > 0 {
			time.Sleep(time.Millisecond)
		}
	})
	return m, err
}

// ParkedGoMem blocks n goroutines on one channel and measures them like
// ParkedJadeMem.
func ParkedGoMem(n int) ParkedMem {
	gate := make(chan struct{})
	var started, done sync.WaitGroup
	var m ParkedMem
	measureParked(n, &m, func() error {
		started.Add(n)
		done.Add(n)
		for i := 0; i < n; i++ {
			go func() { started.Done(); <-gate; done.Done() }()
		}
		started.Wait()
		return nil
	}, func() {
		close(gate)
		done.Wait()
	})
	return m
}

// measureParked runs park (n waiters parked when it returns), takes the
// figures, then runs release (every waiter ended).
func measureParked(n int, m *ParkedMem, park func() error, release func()) error {
	heap0 := inUse()
	debug.FreeOSMemory()
	rss0 := residentBytes()
	peakOK := resetPeak()
	if err := park(); err != nil {
		return err
	}
	m.Heap = float64(inUse()-heap0) / float64(n)
	debug.FreeOSMemory()
	if rss0 > 0 {
		m.RSS = float64(residentBytes()-rss0) / float64(n)
	}
	release()
	if peak := peakBytes(); peakOK && peak > 0 && rss0 > 0 {
		m.PeakRSS = float64(peak-rss0) / float64(n)
	}
	return nil
}

// residentBytes is the resident set from /proc/self/statm, or 0.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// resetPeak resets the resident high-water mark (Linux: "5" to
// /proc/self/clear_refs) and reports whether it could.
func resetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakBytes is VmHWM from /proc/self/status, or 0.
func peakBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			f := bytes.Fields(v)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
