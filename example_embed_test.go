package jade_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jadevm/jade"
)

// Embedding with one import: load and verify a program, register a host
// intrinsic and a blocking one, run a task on the default engine and one
// on an engine of its own, and drain. The README's embedding section is a
// copy of this example.
func Example_embed() {
	ctx := context.Background()
	rt, err := jade.New(jade.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Close(ctx) // drain: listeners close, every task ends

	// A host intrinsic returns at once; a blocking one runs on the pool.
	square := func(c *jade.Call) (jade.Value, error) { x := c.Args()[0].Int(); return jade.I64(x * x), nil }
	lookup := func(ctx context.Context, args []jade.Value) (jade.Value, error) {
		time.Sleep(time.Millisecond) // a database, DNS, a file system...
		return jade.I64(args[0].Int() + 1), nil
	}
	if err := rt.RegisterIntrinsic("host.square", []jade.Type{jade.TI64}, jade.TI64, jade.CapHost, square); err != nil {
		panic(err)
	}
	if err := rt.RegisterBlockingIntrinsic("db.lookup", []jade.Type{jade.TI64}, jade.TI64, jade.CapHost, lookup); err != nil {
		panic(err)
	}
	p, err := rt.Load("add.jasm", []byte(`
.func add(a:i64, b:i64) -> i64
  .local r:i64
  add  r, a, b
  intr r, host.square, r
  intr r, db.lookup, r
  ret  r
.end`))
	if err != nil {
		panic(err) // file:line:col or the verifier's file:line
	}
	task, err := rt.Spawn(p, "add", jade.I64(40), jade.I64(2))
	if err != nil {
		panic(err)
	}
	o, err := task.Wait(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Kind, o.Value.Int()) // 42² + 1

	// An engine of its own: a reduction limit, limits and capabilities.
	eng, err := rt.RegisterEngine("batch", jade.EngineConfig{ReductionLimit: 5_000,
		Limits: jade.ResourceLimits{LiveTasks: 1_000}}, jade.CapSpawn|jade.CapHost)
	if err != nil {
		panic(err)
	}
	t2, err := rt.SpawnWith(jade.SpawnOptions{Engine: eng}, p, "add", jade.I64(1), jade.I64(2))
	if err != nil {
		panic(err)
	}
	o, _ = t2.Wait(ctx)
	fmt.Println(o.Kind, o.Value.Int())
	// Output:
	// Success 1765
	// Success 10
}
