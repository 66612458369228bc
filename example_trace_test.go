package jade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/jadevm/jade"
)

// A trace of the scheduler's events while fanout(100) runs, in Chrome
// trace-event JSON: write buf to a file and open it in ui.perfetto.dev.
// Here it is read back: each child's slices on the worker tracks.
func ExampleObserver_StartTrace() {
	rt, err := jade.New(jade.Options{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())
	src, err := os.ReadFile("examples/fanout.jasm")
	if err != nil {
		panic(err)
	}
	p, err := rt.Load("fanout.jasm", src)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := rt.Observe().StartTrace(&buf); err != nil {
		panic(err)
	}
	o, err := rt.Run(context.Background(), p, "fanout", jade.I64(100))
	if err != nil {
		panic(err)
	}
	if err := rt.Observe().StopTrace(); err != nil {
		panic(err)
	}
	var trace struct {
		TraceEvents []struct {
			Name string
			Ph   string
			Args map[string]any
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &trace); err != nil {
		panic(err)
	}
	ends := map[string]int{}
	for _, e := range trace.TraceEvents {
		if e.Ph == "X" && e.Name == "child" {
			ends[fmt.Sprint(e.Args["end"])]++
		}
	}
	fmt.Println(o.Value.Int(), "children completed:", ends["complete"])
	// Output: 4950 children completed: 100
}
