package bus_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// overflowProg waits for a child under a timeout. The children sleep,
// sleep until an instant, or tick a periodic job 5 times.
const overflowProg = `
.abi 1.1
.func wait(d:i64, which:i64, arg:i64) -> ref
  .local t:ref, v:i64, e:ref, s:ref
  jeqi which, 0, sleeper
  jeqi which, 1, until
  spawn t, ticker, arg
  jmp armed
sleeper:
  spawn t, sleep, arg
  jmp armed
until:
  spawn t, sleep_until, arg
armed:
  intr _, time.timeout, d
  .try b, x, h, e
b:
  joini v, t
x:
  const s, "joined"
  ret s
h:
  cancel t
  outcome v, t
  errkind s, e
  ret s
.end
.func sleep(d:i64) -> i64
  intr _, time.sleep, d
  ret d
.end
.func sleep_until(d:i64) -> i64
  intr _, time.sleep_until, d
  ret d
.end
.func ticker(period:i64) -> i64
  .local job:ref, pol:i64, i:i64, at:i64
  const pol, 1
  intr job, time.periodic, period, pol
  const i, 0
loop:
  jgei i, 5, done
  intr at, time.tick, job
  addi i, i, 1
  jmp loop
done:
  ret i
.end
`

// TestTimeOverflowSaturates: a duration whose deadline (now + ns) is past
// the clock's range means "never", not a deadline that wrapped into the
// past. Before, time.sleep MaxInt64 returned at once, time.timeout
// MaxInt64 fired at once and time.periodic MaxInt64 ticked 5 times at once.
func TestTimeOverflowSaturates(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, overflowProg)
	huge := vmloop.I64(math.MaxInt64)
	cases := []struct {
		name    string
		timeout vmloop.Value
		which   int64
		arg     vmloop.Value
		want    string
	}{
		{"sleep MaxInt64 sleeps", ms(30), 0, huge, vmloop.ErrKindTimeout},
		{"sleep_until MaxInt64 sleeps", ms(30), 1, huge, vmloop.ErrKindTimeout},
		{"periodic MaxInt64 never ticks", ms(30), 2, huge, vmloop.ErrKindTimeout},
		{"timeout MaxInt64 never fires", huge, 0, ms(5), "joined"},
		{"sleep MaxInt64-1 sleeps", ms(30), 0, vmloop.I64(math.MaxInt64 - 1), vmloop.ErrKindTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testkit.SpawnAwait(t, m, p, "wait", c.timeout, vmloop.I64(c.which), c.arg)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, c.want, o.Value.String())
		})
	}
	waitTimers(t, m.Engine())
}
