package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Latencies summarises a latency sample (exact percentiles of the sorted
// sample; the samples are small enough to keep whole).
type Latencies struct {
	N                   int
	P50, P99, P999, Max time.Duration
	// Hist counts the samples by HistBucket (nil when the summary came
	// from elsewhere, e.g. wrk's percentiles): the distribution that
	// `jade perf --html` plots.
	Hist []uint32
}

// HistBuckets is the length of Latencies.Hist: 10 buckets per decade
// from 100 ns to 10 s.
const HistBuckets = 80

// HistLower returns the lower bound of Latencies.Hist's bucket i
// (100 ns × 10^(i/10)); the first bucket also counts shorter samples and
// the last longer ones.
func HistLower(i int) time.Duration {
	return time.Duration(math.Round(100 * math.Pow(10, float64(i)/10)))
}

// HistBucket returns the bucket of Latencies.Hist that counts d.
func HistBucket(d time.Duration) int {
	if d <= 100 {
		return 0
	}
	i := int(math.Floor(10 * math.Log10(float64(d)/100)))
	if i+1 < HistBuckets && d >= HistLower(i+1) { // rounding at a bound
		i++
	} else if i > 0 && i < HistBuckets && d < HistLower(i) {
		i--
	}
	return min(max(i, 0), HistBuckets-1)
}

// Summarize sorts d and returns its percentiles and histogram.
func Summarize(d []time.Duration) Latencies {
	if len(d) == 0 {
		return Latencies{}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	h := make([]uint32, HistBuckets)
	for _, x := range d {
		h[HistBucket(x)]++
	}
	return Latencies{N: len(d), P50: at(0.50), P99: at(0.99), P999: at(0.999), Max: d[len(d)-1], Hist: h}
}

func (l Latencies) String() string {
	return fmt.Sprintf("n=%d p50=%v p99=%v p99.9=%v max=%v", l.N, l.P50, l.P99, l.P999, l.Max)
}

// WakeLatencyJade measures outside wake → dispatch of a task in an
// otherwise idle runtime, n times.
//
// Under runtime/trace each sample is marked by two user log events of
// category TraceCategory: TraceStart just before the wake, then the
// sample's latency (time.Duration.String) once the task has run.
func (e *Env) WakeLatencyJade(n int) (Latencies, error) {
	ctx := context.Background()
	ev := e.RT.NewEvent()
	task, err := e.RT.Spawn(e.progs["waker"], "main", ev, vmloop.I64(int64(n)))
	if err != nil {
		return Latencies{}, err
	}
	s := hostbus.Scheduler(e.RT)
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		for s.WaitingTasks() != 1 {
			runtime.Gosched()
		}
		time.Sleep(50 * time.Microsecond) // let the workers park
		t0 := time.Now()
		trace.Log(ctx, TraceCategory, TraceStart) // no-ops unless runtime/trace runs (cmd/jade-tailtrace)
		e.RT.Signal(ev)
		d := (<-e.woke).Sub(t0)
		trace.Log(ctx, TraceCategory, d.String())
		ds = append(ds, d)
	}
	if _, err := task.Wait(context.Background()); err != nil {
		return Latencies{}, err
	}
	return Summarize(ds), nil
}

// The user log events of the traced benchmarks under runtime/trace: a
// sample either starts with TraceStart and ends with its latency
// (WakeLatencyJade), or is one event, TraceEnd followed by its latency,
// logged when it ended (SleepLatenessTraced).
const (
	TraceCategory = "jade.wake"
	TraceStart    = "start"
	TraceEnd      = "end "
)

// SleepLatenessTraced is SleepLatenessJade with every sample also logged
// for the tracer as it ends (a host call per sleep, which the plain
// benchmark does not pay).
func (e *Env) SleepLatenessTraced(n int, d time.Duration) (Latencies, error) {
	return e.sleepLateness("sleeper_marked", n, d)
}

// SleepLatenessJade measures how late n sleeps of d wake up (actual −
// requested), each measured inside the task with time.now.
func (e *Env) SleepLatenessJade(n int, d time.Duration) (Latencies, error) {
	return e.sleepLateness("sleeper", n, d)
}

// sleepLateness runs the sleeper program prog (n sleeps of d) and
// summarises the latenesses it returns.
func (e *Env) sleepLateness(prog string, n int, d time.Duration) (Latencies, error) {
	o, err := e.RT.Run(context.Background(), e.progs[prog], "main", vmloop.I64(int64(n)), vmloop.I64(int64(d)))
	if err != nil {
		return Latencies{}, err
	}
	if o.Kind != sched.Success {
		return Latencies{}, fmt.Errorf("bench: sleeper: %v", o)
	}
	ds := make([]time.Duration, 0, n)
	for _, v := range o.Value.Elems() {
		ds = append(ds, time.Duration(v.Int()))
	}
	return Summarize(ds), nil
}

// SleepLatenessGo measures the lateness of n time.Sleep(d) calls.
func SleepLatenessGo(n int, d time.Duration) Latencies {
	ds := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		time.Sleep(d)
		ds = append(ds, time.Since(t0)-d)
	}
	return Summarize(ds)
}

// WakeLatencyGo measures a channel send → a blocked goroutine running.
func WakeLatencyGo(n int) Latencies {
	ch, woke := make(chan struct{}), make(chan time.Time)
	go func() {
		for i := 0; i < n; i++ {
			<-ch
			woke <- time.Now()
		}
	}()
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		time.Sleep(50 * time.Microsecond)
		t0 := time.Now()
		ch <- struct{}{}
		ds = append(ds, (<-woke).Sub(t0))
	}
	return Summarize(ds)
}

// IdleWakeups measures the context switches of each worker thread (Linux,
// /proc/self/task/TID/status) and of the whole process over an idle
// period; processBefore is the process-wide figure for the same period
// before the runtime started, taken by the caller with ProcessSwitches.
func (e *Env) IdleWakeups(period time.Duration) (perWorker []int64, process int64, err error) {
	// Make sure every worker has started and gone idle.
	if _, err := e.Run("yield", vmloop.I64(10)); err != nil {
		return nil, 0, err
	}
	time.Sleep(100 * time.Millisecond)
	tids := hostbus.Scheduler(e.RT).WorkerThreads()
	before := make([]int64, len(tids))
	for i, tid := range tids {
		if before[i], err = threadSwitches(tid); err != nil {
			return nil, 0, err
		}
	}
	p0, err := ProcessSwitches()
	if err != nil {
		return nil, 0, err
	}
	time.Sleep(period)
	for i, tid := range tids {
		n, err := threadSwitches(tid)
		if err != nil {
			return nil, 0, err
		}
		perWorker = append(perWorker, n-before[i])
	}
	p1, err := ProcessSwitches()
	return perWorker, p1 - p0, err
}

// ProcessSwitches sums the voluntary and involuntary context switches of
// every thread of this process.
func ProcessSwitches() (int64, error) {
	dirs, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(dirs) == 0 {
		return 0, fmt.Errorf("bench: /proc/self/task not readable: %v", err)
	}
	var sum int64
	for _, d := range dirs {
		tid, _ := strconv.Atoi(filepath.Base(d))
		n, err := threadSwitches(tid)
		if err == nil {
			sum += n
		}
	}
	return sum, nil
}

func threadSwitches(tid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "voluntary_ctxt_switches:") || strings.HasPrefix(line, "nonvoluntary_ctxt_switches:") {
			n, _ := strconv.ParseInt(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), 10, 64)
			sum += n
		}
	}
	return sum, nil
}

// SpawnManyJade spawns n tasks from one task and joins them.
func (e *Env) SpawnManyJade(n int) error {
	v, err := e.Run("spawn_many", vmloop.I64(int64(n)))
	if err == nil && v != int64(n)*int64(n-1)/2 {
		err = fmt.Errorf("bench: spawn_many: sum %d", v)
	}
	return err
}

// SpawnManyGo starts n goroutines and waits for them.
func SpawnManyGo(n int) {
	var wg sync.WaitGroup
	var sum atomic.Int64
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(x int) { sum.Add(int64(x)); wg.Done() }(i)
	}
	wg.Wait()
}

// HandOffJade runs n rounds of srcHandOff, spin loop iterations of work
// each.
func (e *Env) HandOffJade(n, spin int) error {
	v, err := e.Run("hand_off", vmloop.I64(int64(n)), vmloop.I64(int64(spin)))
	if err == nil && v != int64(n) {
		err = fmt.Errorf("bench: hand_off: %d rounds", v)
	}
	return err
}

// handOffSink keeps HandOffGo's work loop from being optimised away.
var handOffSink atomic.Int64

// HandOffGo is HandOffJade with goroutines: two started a round, then
// spin loop iterations of work; it waits for the last ones.
func HandOffGo(n, spin int) {
	var wg sync.WaitGroup
	wg.Add(2 * n)
	for i := 0; i < n; i++ {
		for range 2 {
			go func(x int) { handOffSink.Add(int64(x)); wg.Done() }(i)
		}
		k := 0
		for k < spin {
			k++
		}
		handOffSink.Add(int64(k))
	}
	wg.Wait()
}

// ChainedSpawnJade: each task spawns the next, n deep.
func (e *Env) ChainedSpawnJade(n int) error {
	_, err := e.Run("chained", vmloop.I64(int64(n)), e.RT.NewEvent())
	return err
}

// ChainedSpawnGo: each goroutine starts the next, n deep.
func ChainedSpawnGo(n int) {
	done := make(chan struct{})
	var link func(int)
	link = func(k int) {
		if k == 0 {
			close(done)
			return
		}
		go link(k - 1)
	}
	go link(n)
	<-done
}

// YieldManyJade: k tasks yield m times each.
func (e *Env) YieldManyJade(k, m int) error {
	_, err := e.Run("yield_many", vmloop.I64(int64(k)), vmloop.I64(int64(m)))
	return err
}

// YieldManyGo: k goroutines call runtime.Gosched m times each.
func YieldManyGo(k, m int) {
	var wg sync.WaitGroup
	wg.Add(k)
	for i := 0; i < k; i++ {
		go func() {
			for j := 0; j < m; j++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
}
