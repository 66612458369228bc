package jtrace_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/jadevm/jade/internal/jtrace"
)

// A flight ring keeps a worker's last events; a dump encodes them as a
// Chrome trace that ui.perfetto.dev opens.
func Example() {
	var strs jtrace.Strings
	fn := strs.ID("child")
	t := int64(0)
	now := func() int64 { t += 1000; return t }

	r := jtrace.NewFlight(0, 1024, now)
	for id := uint64(1); id <= 3; id++ {
		r.Emit(jtrace.Event{Kind: jtrace.KindDispatch, Task: id, Fn: fn})
		r.Emit(jtrace.Event{Kind: jtrace.KindSliceEnd, Task: id, Fn: fn, PC: 2, Reason: jtrace.EndComplete})
	}

	var buf bytes.Buffer
	enc := jtrace.NewEncoder(&buf, []string{"worker 0"}, &strs)
	enc.Add(0, r.Snapshot(nil)) // the writer is stopped: it is this goroutine
	if err := enc.Close(now(), 0); err != nil {
		fmt.Println(err)
		return
	}
	var trace struct {
		TraceEvents []struct {
			Name string
			Ph   string
			Args map[string]any
		}
	}
	json.Unmarshal(buf.Bytes(), &trace)
	for _, e := range trace.TraceEvents {
		if e.Ph == "X" {
			fmt.Println(e.Name, e.Args["task"], e.Args["end"], e.Args["endAt"])
		}
	}
	// Output:
	// child 1 complete child@2
	// child 2 complete child@2
	// child 3 complete child@2
}
