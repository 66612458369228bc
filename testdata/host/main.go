// Command host is a Go host outside the jade module that imports only the
// root package: it embeds a runtime, registers intrinsics, spawns on two
// engines, exchanges a message, reads the metrics and the task list, and
// takes a CPU profile, a heap profile and a trace. The jade module's
// surface test builds and runs it.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jadevm/jade"
)

const prog = `.abi 1.6
.func add(a:i64, b:i64) -> i64
  .local r:i64
  add  r, a, b
  intr r, host.square, r
  intr r, db.lookup, r
  ret  r
.end
.func echo(ch:ref) -> i64
  .local v:i64
  intr v, chan.recv_i64, ch
  ret  v
.end
.func spin(n:i64) -> i64
  .local i:i64, one:i64, c:i64
  const i, 0
  const one, 1
l:
  lt   c, i, n
  jz   c, d
  add  i, i, one
  jmp  l
d:
  ret  i
.end`

func check(what string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "host: %s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt, err := jade.New(jade.Options{Workers: 2, FlightEvents: 1})
	check("new", err)

	check("register", rt.RegisterIntrinsic("host.square", []jade.Type{jade.TI64}, jade.TI64, jade.CapHost,
		func(c *jade.Call) (jade.Value, error) { x := c.Args()[0].Int(); return jade.I64(x * x), nil }))
	check("register blocking", rt.RegisterBlockingIntrinsic("db.lookup", []jade.Type{jade.TI64}, jade.TI64, jade.CapHost,
		func(ctx context.Context, args []jade.Value) (jade.Value, error) {
			return jade.I64(args[0].Int() + 1), nil
		}))
	p, err := rt.Load("host.jasm", []byte(prog))
	check("load", err)

	var cpu, heap, trace bytes.Buffer
	check("start profile", rt.Observe().StartProfile(&cpu))
	check("start heap profile", rt.Observe().StartHeapProfile(&heap))
	check("start trace", rt.Observe().StartTrace(&trace))

	o, err := rt.Run(ctx, p, "add", jade.I64(40), jade.I64(2))
	check("run", err)
	fmt.Println("add:", o.Kind, o.Value.Int())

	eng, err := rt.RegisterEngine("batch", jade.EngineConfig{ReductionLimit: 5_000,
		Limits: jade.ResourceLimits{LiveTasks: 100}}, jade.CapSpawn)
	check("register engine", err)
	spin, err := rt.SpawnWith(jade.SpawnOptions{Engine: eng, Name: "spinner"}, p, "spin", jade.I64(3_000_000))
	check("spawn on engine", err)

	ch, err := rt.NewChan(jade.ChanI64, 1)
	check("new chan", err)
	echo, err := rt.Spawn(p, "echo", ch)
	check("spawn", err)
	check("send", rt.Send(ctx, ch, jade.I64(7)))
	o, err = echo.Wait(ctx)
	check("wait echo", err)
	fmt.Println("echo:", o.Kind, o.Value.Int())
	o, err = spin.Wait(ctx)
	check("wait spin", err)
	fmt.Println("spin:", o.Kind, o.Value.Int(), spin.Name())

	m := rt.Observe().Metrics()
	engines := 0
	for _, e := range m.Engines {
		if e.Name == "main" || e.Name == "batch" {
			engines++
		}
	}
	fmt.Println("metrics:", len(m.Workers), "workers,", engines, "engines,", m.IOBackend != "")
	fmt.Println("engine:", eng.Name(), eng.Config().ReductionLimit, len(rt.Observe().Tasks()) <= 2)

	check("stop trace", rt.Observe().StopTrace())
	check("stop heap profile", rt.Observe().StopHeapProfile())
	check("stop profile", rt.Observe().StopProfile())
	fmt.Println("profiles:", cpu.Len() > 0, heap.Len() > 0, bytes.Contains(trace.Bytes(), []byte("traceEvents")))
	check("close", rt.Close(ctx))
}
