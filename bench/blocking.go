package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The blocking-call benchmark: a 1 ms ticker task (time.sleep_until to
// each deadline, lateness against its schedule) runs beside tasks whose
// host call blocks its goroutine, registered with
// RegisterBlockingIntrinsic so it runs on the bus's pool and never on a
// worker. It is run once with the calls and once without, in the same
// environment: the difference is what the blocking calls cost the ticker.

// srcBlockCaller makes one blocking host call of ns nanoseconds.
const srcBlockCaller = `
.func main(ns:i64) -> i64
  .local r:i64
  intr r, bench.block, ns
  ret r
.end
`

// registerBlock registers bench.block(ns): a host call that blocks its
// goroutine for ns nanoseconds (or until its task ends) and returns 1.
func registerBlock(e *Env) error {
	return e.RT.RegisterBlockingIntrinsic("bench.block", []vmloop.Type{vmloop.TI64}, vmloop.TI64, bus.CapHost,
		func(ctx context.Context, args []vmloop.Value) (vmloop.Value, error) {
			select {
			case <-time.After(time.Duration(args[0].Int())):
				return vmloop.I64(1), nil
			case <-ctx.Done():
				return vmloop.Void(), ctx.Err()
			}
		})
}

// BlockingTicker is the result of one BlockingTickerJade run.
type BlockingTicker struct {
	// Ticker is the ticker's lateness beside the blocking calls; Alone is
	// the same ticker's with no other task.
	Ticker, Alone Latencies
	// Calls is how many blocking calls completed during the run.
	Calls int
}

// BlockingTickerJade spawns calls tasks that each make one blocking host
// call of d, then runs a ticker of ticks ticks beside them; then the
// same ticker alone.
func (e *Env) BlockingTickerJade(calls int, d time.Duration, ticks int) (BlockingTicker, error) {
	var r BlockingTicker
	var tasks []*sched.Task
	for range calls {
		t, err := e.RT.Spawn(e.progs["block_caller"], "main", vmloop.I64(int64(d)))
		if err != nil {
			return r, err
		}
		tasks = append(tasks, hostbus.Task(t))
	}
	var err error
	if r.Ticker, err = e.ticker(ticks); err != nil {
		return r, err
	}
	for _, t := range tasks {
		o, err := bus.Await(context.Background(), t)
		if err != nil {
			return r, err
		}
		if o.Kind != sched.Success {
			return r, fmt.Errorf("bench: blocking caller: %v", o)
		}
		r.Calls++
	}
	r.Alone, err = e.ticker(ticks)
	return r, err
}

// ticker runs timer_ticker for ticks ticks of Period and summarises its
// lateness.
func (e *Env) ticker(ticks int) (Latencies, error) {
	o, err := e.RT.Run(context.Background(), e.progs["timer_ticker"], "main", vmloop.I64(int64(ticks)), vmloop.I64(int64(Period)))
	if err != nil {
		return Latencies{}, err
	}
	if o.Kind != sched.Success {
		return Latencies{}, fmt.Errorf("bench: timer ticker: %v", o)
	}
	ds := make([]time.Duration, 0, ticks)
	for _, v := range o.Value.Elems() {
		ds = append(ds, time.Duration(v.Int()))
	}
	return Summarize(ds), nil
}
