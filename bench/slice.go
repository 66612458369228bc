package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The slice-time benchmark: how long one slice (the engine's reduction
// limit) lasts in wall time for a loop of plain instructions and for a
// loop that calls an intrinsic (time.now) each iteration, each running
// alone on the runtime. S-6 counts a woken task's wait in slices ahead of
// it, so a slice must last about as long whatever the code: an intrinsic
// call's round trip through the runtime is charged reductions for it
// (sched's intrCost).

const (
	// srcPlainLoop runs n iterations of three plain instructions.
	srcPlainLoop = `
.func main(n:i64) -> i64
  .local i:i64, x:i64
  const i, 0
  const x, 0
l:
  addi x, x, 3
  addi i, i, 1
  jlt  i, n, l
  ret  x
.end
`
	// srcRequestLoop runs n iterations that each make a request to the
	// scheduler that it answers at once (chan.len: time.now runs in the
	// VM loop).
	srcRequestLoop = `
.abi 1.5
.func main(n:i64) -> i64
  .local i:i64, x:i64, c:ref
  intr c, chan.new_i64, 1
  const i, 0
l:
  intr x, chan.len, c
  addi i, i, 1
  jlt  i, n, l
  ret  x
.end
`
)

// SliceTimeOf runs program prog ("plain_loop" or "request_loop") with n
// iterations alone and returns its wall time over the slices it took.
func (e *Env) SliceTimeOf(prog string, n int) (time.Duration, error) {
	d0 := e.dispatches()
	t0 := time.Now()
	o, err := e.RT.Run(context.Background(), e.progs[prog], "main", vmloop.I64(int64(n)))
	wall := time.Since(t0)
	d1 := e.dispatches()
	if err != nil {
		return 0, err
	}
	if o.Kind != sched.Success {
		return 0, fmt.Errorf("bench: %s: %v", prog, o)
	}
	if d1 <= d0 {
		return 0, fmt.Errorf("bench: %s: no dispatch counted", prog)
	}
	return wall / time.Duration(d1-d0), nil
}

// dispatches sums the slices every worker has run.
func (e *Env) dispatches() uint64 {
	var n uint64
	for _, w := range hostbus.Scheduler(e.RT).Metrics().Workers {
		n += w.Dispatches
	}
	return n
}
