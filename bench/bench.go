package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/examples"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/native"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Env is a Jade runtime with the benchmark programs loaded.
type Env struct {
	RT      *jade.Runtime
	progs   map[string]*vmloop.Program
	workers int

	goEng *bus.Member    // an engine forced onto the pure-Go VM loop
	woke  chan time.Time // bench.woke: the dispatch time of a woken task
	ticks atomic.Int64   // bench.tick: hog progress (2^20 iterations each)
	// tickLog, when set, is called with the time of every bench.tick.
	tickLog atomic.Pointer[func(time.Time)]
}

// NewEnv starts a runtime with the given number of workers and sets
// GOMAXPROCS to workers+1 (one P in reserve for the host, as the runtime
// documents).
func NewEnv(workers int) (*Env, error) {
	rt, err := jade.New(jade.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	e := &Env{RT: rt, progs: map[string]*vmloop.Program{}, workers: workers, woke: make(chan time.Time, 1024)}
	rt.RegisterIntrinsic("bench.woke", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
		select {
		case e.woke <- time.Now():
		default:
		}
		return vmloop.Void(), nil
	})
	rt.RegisterIntrinsic("bench.mark", []vmloop.Type{vmloop.TI64}, vmloop.TVoid, 0, func(c *bus.Call) (vmloop.Value, error) {
		// A sample that ended now after the given lateness (ns), for the
		// tracer (cmd/jade-tailtrace); nothing when no trace runs.
		if trace.IsEnabled() {
			trace.Log(context.Background(), TraceCategory, TraceEnd+time.Duration(c.Args()[0].Int()).String())
		}
		return vmloop.Void(), nil
	})
	rt.RegisterIntrinsic("bench.tick", nil, vmloop.TVoid, 0, func(*bus.Call) (vmloop.Value, error) {
		e.ticks.Add(1)
		if f := e.tickLog.Load(); f != nil {
			(*f)(time.Now())
		}
		return vmloop.Void(), nil
	})
	if e.goEng, err = hostbus.Bus(rt).RegisterEngine("goloop", sched.EngineRuntimeConfig{GoLoop: true}, bus.CapAll); err != nil {
		rt.Shutdown(context.Background())
		return nil, err
	}
	if err := registerBlock(e); err != nil {
		rt.Shutdown(context.Background())
		return nil, err
	}
	for name, src := range map[string]string{
		"spawn_join": srcSpawnJoin, "ping_pong": srcPingPong, "yield": srcYield,
		"fib": string(examples.Fib), "parked": srcParked, "waker": srcWaker, "hog": srcHog, "sleeper": srcSleeper, "sleeper_marked": srcSleeperMarked,
		"timer_ticker": srcTimerTicker, "block_caller": srcBlockCaller, "plain_loop": srcPlainLoop, "request_loop": srcRequestLoop,
		"spawn_many": srcSpawnMany, "hand_off": srcHandOff, "chained": srcChained, "yield_many": srcYieldMany, "chans": srcChans,
		"map_put_get": srcMapPutGet,
	} {
		p, err := rt.Load(name+".jasm", []byte(src))
		if err != nil {
			rt.Shutdown(context.Background())
			return nil, fmt.Errorf("bench: load %s: %w", name, err)
		}
		e.progs[name] = p
	}
	return e, nil
}

// Close shuts the runtime down.
func (e *Env) Close() { e.RT.Shutdown(context.Background()) }

// Run runs program prog's main with args and returns its i64 result.
func (e *Env) Run(prog string, args ...vmloop.Value) (int64, error) {
	return e.RunFunc(prog, "main", args...)
}

// RunFunc runs function fn of program prog with args and returns its i64
// result.
func (e *Env) RunFunc(prog, fn string, args ...vmloop.Value) (int64, error) {
	o, err := e.RT.Run(context.Background(), e.progs[prog], fn, args...)
	if err != nil {
		return 0, err
	}
	if o.Kind != sched.Success {
		return 0, fmt.Errorf("bench: %s: %s", prog, o)
	}
	return o.Value.Int(), nil
}

// WithProcs runs f with GOMAXPROCS set to n and restores it.
func WithProcs(n int, f func()) {
	prev := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(prev)
	f()
}

// SpawnJoinJade spawns and joins n trivial tasks, one after the other,
// from a Jade task.
func (e *Env) SpawnJoinJade(n int) error {
	_, err := e.Run("spawn_join", vmloop.I64(int64(n)))
	return err
}

// SpawnJoinGo starts and waits for n trivial goroutines, one after the
// other (go + WaitGroup).
func SpawnJoinGo(n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { wg.Done() }()
		wg.Wait()
	}
}

// PingPongJade makes n event round trips between two tasks.
func (e *Env) PingPongJade(n int) error {
	_, err := e.Run("ping_pong", vmloop.I64(int64(n)))
	return err
}

// PingPongGo makes n round trips between two goroutines over unbuffered
// channels.
func PingPongGo(n int) {
	ping, pong := make(chan struct{}), make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			<-ping
			pong <- struct{}{}
		}
	}()
	for i := 0; i < n; i++ {
		ping <- struct{}{}
		<-pong
	}
}

// YieldJade yields n times from a Jade task.
func (e *Env) YieldJade(n int) error { _, err := e.Run("yield", vmloop.I64(int64(n))); return err }

// YieldGo calls runtime.Gosched n times.
func YieldGo(n int) {
	for i := 0; i < n; i++ {
		runtime.Gosched()
	}
}

// FibJade computes fib(n) on the Jade VM (the default loop: the cgo loop
// where available, else the Go loop).
func (e *Env) FibJade(n int) (int64, error) { return e.RunFunc("fib", "fib", vmloop.I64(int64(n))) }

// FibJadeGo computes fib(n) on the pure-Go VM loop.
func (e *Env) FibJadeGo(n int) (int64, error) {
	return e.runGo("fib", "fib", vmloop.I64(int64(n)))
}

// runGo runs function fn of program prog on the pure-Go VM loop and
// returns its i64 result.
func (e *Env) runGo(prog, fn string, args ...vmloop.Value) (int64, error) {
	t, err := e.goEng.Spawn(nil, e.progs[prog], fn, args...)
	if err != nil {
		return 0, err
	}
	o, err := bus.Await(context.Background(), t)
	if err != nil {
		return 0, err
	}
	if o.Kind != sched.Success {
		return 0, fmt.Errorf("bench: %s: %s", prog, o)
	}
	return o.Value.Int(), nil
}

// NativeLoop reports whether the default loop is the cgo loop.
func NativeLoop() bool { return native.Enabled() }

// NewLua returns a gopher-lua state with fib compiled.
func NewLua() (*lua.LState, *lua.LFunction, error) {
	L := lua.NewState()
	fn, err := L.LoadString(luaFib)
	if err != nil {
		L.Close()
		return nil, nil, err
	}
	return L, fn, nil
}

// FibLua runs fib(30) on gopher-lua.
func FibLua(L *lua.LState, fn *lua.LFunction) (int64, error) {
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return 0, err
	}
	v := L.Get(-1)
	L.Pop(1)
	return int64(lua.LVAsNumber(v)), nil
}

// ParkedJade parks n tasks on one event and returns the heap bytes
// (ParkedMem.Heap) they take per task.
func (e *Env) ParkedJade(n int) (float64, error) {
	m, err := e.ParkedJadeMem(n)
	return m.Heap, err
}

// ParkedGo blocks n goroutines on one channel and returns the bytes they
// take per goroutine, measured like ParkedJade.
func ParkedGo(n int) float64 { return ParkedGoMem(n).Heap }

// inUse returns the heap in use plus the goroutine stacks, after two GCs
// (the figure every bytes-per-object benchmark compares).
func inUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}
