package jade_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/pprof/profile"

	"github.com/jadevm/jade"
)

// A CPU profile of the Jade code, read back with the pprof library (or
// `go tool pprof -top FILE`): the function and .jasm line of the
// innermost frame of the heaviest sample.
func ExampleObserver_StartProfile() {
	rt, err := jade.New(jade.Options{Workers: 1, ProfilePeriod: time.Millisecond})
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())
	src, err := os.ReadFile("examples/fib.jasm")
	if err != nil {
		panic(err)
	}
	p, err := rt.Load("fib.jasm", src)
	if err != nil {
		panic(err)
	}
	var prof *profile.Profile
	for prof == nil || len(prof.Sample) == 0 { // fib(30) may end between two samples
		var buf bytes.Buffer
		if err := rt.Observe().StartProfile(&buf); err != nil {
			panic(err)
		}
		if _, err := rt.Run(context.Background(), p, "main", jade.StrArray(nil)); err != nil {
			panic(err)
		}
		if err := rt.Observe().StopProfile(); err != nil {
			panic(err)
		}
		if prof, err = profile.Parse(&buf); err != nil {
			panic(err)
		}
	}
	top := prof.Sample[0]
	for _, s := range prof.Sample {
		if s.Value[1] > top.Value[1] {
			top = s
		}
	}
	fn := top.Location[0].Line[0].Function
	fmt.Println(fn.Name, fn.Filename, top.Label["jade_engine"])
	// Output: fib fib.jasm [main]
}
