package jade_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jadevm/jade"
)

// Load a program, start a runtime, spawn a task with JadeValue arguments
// and await its outcome.
func Example() {
	rt, err := jade.New(jade.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())

	p, err := rt.Load("add.jasm", []byte(`
.func add(a:i64, b:i64) -> i64
  .local c:i64
  add c, a, b
  ret c
.end`))
	if err != nil {
		panic(err)
	}
	task, err := rt.Spawn(p, "add", jade.I64(40), jade.I64(2))
	if err != nil {
		panic(err)
	}
	o, err := task.Wait(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Kind, o.Value.Int())
	// Output: Success 42
}

// Bad assembly is reported with file:line:col.
func ExampleAssemble() {
	_, err := jade.Assemble("bad.jasm", []byte(".func main() -> i64\n  ad r0, r0, r0\n.end\n"))
	fmt.Println(err)
	// Output: bad.jasm:2:3: unknown mnemonic ad (did you mean add?)
}

// A host intrinsic extends the VM from Go. It runs on a worker and must
// return quickly, or suspend the task and complete it later.
func ExampleRuntime_RegisterIntrinsic() {
	rt, _ := jade.New(jade.Options{Stdout: os.Stdout})
	defer rt.Close(context.Background())
	rt.RegisterIntrinsic("host.square", []jade.Type{jade.TI64}, jade.TI64, jade.CapHost,
		func(c *jade.Call) (jade.Value, error) {
			x := c.Args()[0].Int()
			return jade.I64(x * x), nil
		})
	p, err := rt.Load("sq.jasm", []byte(`
.func main(x:i64) -> i64
  .local r:i64
  intr r, host.square, x
  intr _, io.print_i64, r
  ret r
.end`))
	if err != nil {
		panic(err)
	}
	rt.Run(context.Background(), p, "main", jade.I64(12))
	// Output: 144
}

// A host intrinsic that blocks (here a sleep standing for a database
// query) runs on the blocking pool: the calling task waits, the workers
// run other tasks, and the function's context ends if the task does.
func ExampleRuntime_RegisterBlockingIntrinsic() {
	rt, _ := jade.New(jade.Options{Stdout: os.Stdout, BlockingPool: 8})
	defer rt.Close(context.Background())
	rt.RegisterBlockingIntrinsic("db.lookup", []jade.Type{jade.TI64}, jade.TI64, jade.CapHost,
		func(ctx context.Context, args []jade.Value) (jade.Value, error) {
			select {
			case <-time.After(10 * time.Millisecond): // the blocking call
				return jade.I64(args[0].Int() * 10), nil
			case <-ctx.Done():
				return jade.Void(), ctx.Err()
			}
		})
	p, err := rt.Load("db.jasm", []byte(`
.func main(k:i64) -> i64
  .local r:i64
  intr r, db.lookup, k
  intr _, io.print_i64, r
  ret r
.end`))
	if err != nil {
		panic(err)
	}
	rt.Run(context.Background(), p, "main", jade.I64(7))
	// Output: 70
}

// A failing task's error is its Failure outcome, not a Go error.
func ExampleTask_Wait() {
	rt, _ := jade.New(jade.Options{})
	defer rt.Close(context.Background())
	p, _ := rt.Load("f.jasm", []byte(`
.func main() -> i64
  .local m:ref, e:ref
  const m, "out of cheese"
  newerr e, m
  throw e
.end`))
	task, _ := rt.Spawn(p, "main")
	o, _ := task.Wait(context.Background())
	fmt.Println(o)
	// Output: Failure(Error: out of cheese)
}

// Declare a second engine — event-driven, so without a timer wheel — and
// run a task on it: a sleep there is refused with an error naming the
// engine, while the default engine (which has a wheel) sleeps.
func ExampleRuntime_RegisterEngine() {
	rt, err := jade.New(jade.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())
	events, err := rt.RegisterEngine("events", jade.EngineConfig{
		ReductionLimit: 10_000,
		Limits:         jade.ResourceLimits{LiveTasks: 100},
	}, jade.CapSpawn)
	if err != nil {
		panic(err)
	}
	p, err := rt.Load("nap.jasm", []byte(`
.abi 1.1
.func nap() -> ref
  .local d:i64, e:ref, s:ref
  const d, 1000000            ; 1 ms
  .try b, x, h, e
b:
  intr _, time.sleep, d
x:
  const s, "slept"
  ret s
h:
  errmsg s, e
  ret s
.end`))
	if err != nil {
		panic(err)
	}
	for _, e := range []*jade.Engine{rt.Main(), events} {
		task, err := rt.SpawnWith(jade.SpawnOptions{Engine: e}, p, "nap")
		if err != nil {
			panic(err)
		}
		o, _ := task.Wait(context.Background())
		fmt.Println(e.Name()+":", o.Value)
	}
	// Output:
	// main: slept
	// events: time.sleep: engine "events" (id 2) has no timer wheel; declare it with a timerWheelConfig
}

// A server drains: Close closes its listener, the accept throws a
// ShutdownError, and main stops accepting and returns.
func ExampleRuntime_Close() {
	rt, _ := jade.New(jade.Options{Stdout: os.Stdout})
	p, err := rt.Load("serve.jasm", []byte(`.abi 1.2
.func main(addr:ref) -> i64
  .local l:ref, c:ref, e:ref, k:ref, z:i64
  .try b, en, h, e
  intr l, net.listen, addr
b:
  intr c, net.accept, l
  jmp b
en:
h:
  errkind k, e
  intr _, io.print_str, k
  intr _, net.close, l
  const z, 0
  ret z
.end`))
	if err != nil {
		panic(err)
	}
	task, _ := rt.Spawn(p, "main", jade.Str("127.0.0.1:0"))
	time.Sleep(10 * time.Millisecond) // main is in net.accept (or, if not yet, its net.listen throws the same)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rt.Close(ctx); err != nil {
		panic(err)
	}
	o, _ := task.Wait(ctx)
	fmt.Println(o.Kind)
	// Output:
	// ShutdownError
	// Success
}
