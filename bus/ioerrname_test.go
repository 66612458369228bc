//go:build linux

package bus_test

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// sockErrProg catches the errors of net.listen and net.connect.
const sockErrProg = `
.abi 1.2
.func listen_err(a:ref) -> ref
  .local l:ref, e:ref, s:ref
  .try b, x, h, e
b:
  intr l, net.listen, a
x:
  intr _, net.close, l
  const s, "listening"
  ret s
h:
  errmsg s, e
  ret s
.end
.func connect_err(a:ref) -> ref
  .local c:ref, e:ref, s:ref
  .try b, x, h, e
b:
  intr c, net.connect, a
x:
  intr _, net.close, c
  const s, "connected"
  ret s
h:
  errmsg s, e
  ret s
.end
`

// TestSocketErrorsNameTheBackend: the errors of the sockets net.listen
// and net.connect make name the backend of the worker that ran them
// ("epoll: listen: ..."), never the package the helpers live in.
func TestSocketErrorsNameTheBackend(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		want := map[string]string{"uring": "io_uring", "epoll": "epoll"}[os.Getenv("JADE_POLLER")]
		var m *bus.Member
		b := testkit.Bus(t, bus.Config{Workers: 1}, func(b *bus.Bus) {
			m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{}, bus.CapAll)
		})
		p := testkit.Prog(t, b, sockErrProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		for _, c := range []struct{ fn, addr, prefix string }{
			{"listen_err", "no address", "net.listen: " + want + ": parse address: "},
			{"listen_err", ln.Addr().String(), "net.listen: " + want + ": listen: bind " + ln.Addr().String() + ": address already in use"},
			{"connect_err", "no address", "net.connect: " + want + ": parse address: "},
		} {
			o := testkit.SpawnAwait(t, m, p, c.fn, vmloop.Str(c.addr))
			require.Equal(t, sched.Success, o.Kind, "%s(%q): %v", c.fn, c.addr, o)
			msg := o.Value.String()
			require.True(t, strings.HasPrefix(msg, c.prefix), "%s(%q) = %q, want the prefix %q", c.fn, c.addr, msg, c.prefix)
		}
		require.Equal(t, want, b.Scheduler().IOBackend())
	})
}
