package bus_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

// errTextProg: a child passes one kind of ext handle where another is
// wanted and traps; its parent reads the trap's text through errmsg.
const errTextProg = `
.abi 1.2
.func read_job() -> ref
  .local t:ref, v:i64, e:ref, s:ref
  spawn t, job_as_conn
  .try b, x, h, e
b:
  joini v, t
x:
  const s, "joined"
  ret s
h:
  errmsg s, e
  ret s
.end
.func job_as_conn() -> i64
  .local job:ref, p:i64, pol:i64, buf:ref, n:i64
  const p, 1000000000
  const pol, 0
  intr job, time.periodic, p, pol
  const n, 16
  bnew buf, n
  const n, 0
  intr n, net.read, job, buf, n
  ret n
.end
.func tick_listener() -> ref
  .local t:ref, v:i64, e:ref, s:ref
  spawn t, listener_as_job
  .try b, x, h, e
b:
  joini v, t
x:
  const s, "joined"
  ret s
h:
  errmsg s, e
  ret s
.end
.func listener_as_job() -> i64
  .local a:ref, l:ref, n:i64
  const a, "127.0.0.1:0"
  intr l, net.listen, a
  intr n, time.tick, l
  ret n
.end
`

// hostText matches what a Go value's rendering leaks: a pointer, a
// struct literal, a Go type name.
var hostText = regexp.MustCompile(`0x[0-9a-f]{6,}|&\{|\*[a-z]+\.[A-Za-z]`)

// TestErrorTextsDescribeJadeValues: the text of a trap that another task
// reads (errmsg of the TaskError) names Jade kinds, never the Go value of
// a host object (it was "net.read: argument is &{1 0x1310f800008 ...}",
// and "argument is a *bus.ioHandle").
func TestErrorTextsDescribeJadeValues(t *testing.T) {
	b, m := timeBus(t, 2, sched.ResourceLimits{})
	p := testkit.Prog(t, b, errTextProg)
	for _, c := range []struct{ fn, want string }{
		{"read_job", "net.read: argument is a periodic job, want a conn"},
		{"tick_listener", "time.tick: argument is a listener, want a periodic job"},
	} {
		t.Run(c.fn, func(t *testing.T) {
			o := testkit.SpawnAwait(t, m, p, c.fn)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			msg := o.Value.String()
			require.Contains(t, msg, c.want)
			require.NotRegexp(t, hostText, msg)
		})
	}
}
