package native

import (
	"github.com/jadevm/jade/internal/vmhook"
	"math"
	"testing"

	"github.com/jadevm/jade/vmloop"
)

// Benchmarks: the same program and Exec setup on both loops, run as the
// scheduler runs a task: Run with the default budget (25,000 reductions)
// until the task completes. The "-unbounded" variants use one Run call
// with an unbounded budget: the difference to the default is the cost of
// re-entering the loop (for the C loop, the cgo crossing) every 25,000
// reductions. crossings/op counts the calls into C (budget re-entries
// plus exits to Go for instructions outside the hot subset).
//
//	go test -run '^$' -bench . -count 5 ./native

const defaultBudget = 25_000

func benchRun(b *testing.B, p *vmloop.Program, args []vmloop.Value, native bool, budget int64, want int64) {
	if native && !Available() {
		b.Skip("C loop not compiled in")
	}
	if native && !Enabled() {
		Enable()
	}
	var calls int
	if native {
		// count the crossings on the first iteration only
		vmhook.SetLoop(func(c vmhook.Call) vmhook.Result { calls++; return run(c) })
	}
	one := func() uint64 {
		e, err := vmloop.NewExec(p, entryOf(p), args, vmloop.DefaultLimits, 1)
		if err != nil {
			b.Fatal(err)
		}
		e.SetNative(native)
		for {
			sig := e.Run(budget)
			if sig == vmloop.SigPreempted {
				continue
			}
			if sig != vmloop.SigCompleted || (want >= 0 && e.Result().Int() != want) {
				b.Fatalf("%v %v %v", sig, e.Result(), e.Trap())
			}
			break
		}
		r := e.Reductions()
		e.Free()
		return r
	}
	red := one()
	if native {
		Enable()
	}
	b.ResetTimer()
	for b.Loop() {
		one()
	}
	b.ReportMetric(float64(red), "reductions/op")
	if native {
		b.ReportMetric(float64(calls), "crossings/op")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(red), "ns/reduction")
}

func benchPair(b *testing.B, src string, args []vmloop.Value, want int64) {
	p := mustProgram(b, "bench", src)
	b.Run("jade-native", func(b *testing.B) { benchRun(b, p, args, true, defaultBudget, want) })
	b.Run("jade-go", func(b *testing.B) { benchRun(b, p, args, false, defaultBudget, want) })
	b.Run("jade-native-unbounded", func(b *testing.B) { benchRun(b, p, args, true, math.MaxInt64/2, want) })
	b.Run("jade-go-unbounded", func(b *testing.B) { benchRun(b, p, args, false, math.MaxInt64/2, want) })
}

// BenchmarkFib30 is recursive fib(30): calls, returns, compare-and-branch.
func BenchmarkFib30(b *testing.B) {
	benchPair(b, srcFib, []vmloop.Value{vmloop.I64(30)}, 832040)
}

// BenchmarkLoop is a counted loop of i64 and f64 arithmetic (1e6 rounds).
func BenchmarkLoop(b *testing.B) {
	benchPair(b, srcLoop, []vmloop.Value{vmloop.I64(1_000_000)}, -1)
}

// BenchmarkParse scans a 64 KiB byte buffer 16 times with bget (a byte-
// scanning loop as in a RESP parser). bget is outside the C loop's hot
// subset, so every bget is one exit to Go (see doc.go).
func BenchmarkParse(b *testing.B) {
	benchPair(b, srcParse, []vmloop.Value{vmloop.I64(64 << 10), vmloop.I64(16)}, 16*(64<<10)/8)
}

// BenchmarkCrossing measures one Run slice that runs a single instruction
// (a backward jmp, then preemption): for jade-native that is one cgo
// crossing plus the hook's bookkeeping, for jade-go the Go loop's entry
// and exit. The crossing share of a benchmark is about
// crossings/op × (native − go ns here) / ns/op.
func BenchmarkCrossing(b *testing.B) {
	p := mustProgram(b, "spin", `
.abi 1.0
.func main() -> i64
loop:
  jmp loop
.end
`)
	for _, native := range []bool{true, false} {
		name := "jade-go"
		if native {
			name = "jade-native"
		}
		b.Run(name, func(b *testing.B) {
			if native && !Available() {
				b.Skip("C loop not compiled in")
			}
			e, err := vmloop.NewExec(p, 0, nil, vmloop.DefaultLimits, 1)
			if err != nil {
				b.Fatal(err)
			}
			e.SetNative(native)
			for b.Loop() {
				if e.Run(1) != vmloop.SigPreempted {
					b.Fatal("not preempted")
				}
			}
		})
	}
}
