//go:build linux

package bus_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

const serverIOProg = `
.abi 1.3
; serve_bounded reads with net.read_n into a 16-byte buffer at offset 2,
; at most 3 bytes a call, until 6 bytes arrived; it returns the buffer as
; a string (bytes 0-1 and 5.. untouched: zero).
.func serve_bounded(l:ref) -> ref
  .local c:ref, buf:ref, s:ref, n:i64, got:i64, off:i64, max:i64, sz:i64
  intr c, net.accept, l
  const sz, 16
  bnew buf, sz
  const got, 0
  const max, 3
more:
  const off, 2
  intr n, net.read_n, c, buf, off, max
  add got, got, n
  jlti got, 6, more
  intr _, net.close, c
  btos s, buf
  ret s
.end
; bad_read tries net.read_n with [off, off+max) and returns the error kind
; and message.
.func bad_read(l:ref, off:i64, max:i64) -> ref
  .local c:ref, buf:ref, e:ref, k:ref, m:ref, sz:i64
  .try b, x, h, e
  intr c, net.accept, l
  const sz, 8
  bnew buf, sz
b:
  intr _, net.read_n, c, buf, off, max
x:
  const k, "read"
  ret k
h:
  errkind k, e
  errmsg m, e
  sconcat k, k, m
  ret k
.end
; reply_and_half_close reads one chunk, writes "reply", shuts the write
; half, reads until the peer's end of stream and closes: the peer reads
; the whole reply, then EOF, never a reset.
.func reply_and_half_close(l:ref) -> i64
  .local c:ref, buf:ref, r:ref, rb:ref, n:i64, z:i64, sz:i64, one:i64, total:i64
  intr c, net.accept, l
  const sz, 4
  bnew buf, sz
  const z, 0
  const one, 1
  intr n, net.read, c, buf, z
  const r, "reply"
  stob rb, r
  blen sz, rb
  intr _, net.write, c, rb, z, sz
  intr _, net.shutdown, c, one
  const total, 0
drain:
  intr n, net.read, c, buf, z
  add total, total, n
  jgti n, 0, drain
  intr _, net.close, c
  ret total
.end
; addrs returns "local|peer" of the connection it accepts on l.
.func addrs(l:ref) -> ref
  .local c:ref, a:ref, p:ref, bar:ref
  intr c, net.accept, l
  intr a, net.local_addr, c
  intr p, net.peer_addr, c
  const bar, "|"
  sconcat a, a, bar
  sconcat a, a, p
  intr _, net.close, c
  ret a
.end
.func start_serve_bounded() -> ref
  .local l:ref, a:ref, t:ref, out:ref, addr:ref, z:i64, one:i64, two:i64
  const addr, "127.0.0.1:0"
  const z, 0
  intr l, net.listen_opts, addr, z
  intr a, net.local_addr, l
  spawn t, serve_bounded, l
  const two, 2
  const one, 1
  anew out, two, ref
  asetr out, z, a
  asetr out, one, t
  ret out
.end
.func start_bad_read(off:i64, max:i64) -> ref
  .local l:ref, a:ref, t:ref, out:ref, addr:ref, z:i64, one:i64, two:i64
  const addr, "127.0.0.1:0"
  const z, 0
  intr l, net.listen_opts, addr, z
  intr a, net.local_addr, l
  spawn t, bad_read, l, off, max
  const two, 2
  const one, 1
  anew out, two, ref
  asetr out, z, a
  asetr out, one, t
  ret out
.end
.func start_reply_and_half_close() -> ref
  .local l:ref, a:ref, t:ref, out:ref, addr:ref, z:i64, one:i64, two:i64
  const addr, "127.0.0.1:0"
  const z, 0
  intr l, net.listen_opts, addr, z
  intr a, net.local_addr, l
  spawn t, reply_and_half_close, l
  const two, 2
  const one, 1
  anew out, two, ref
  asetr out, z, a
  asetr out, one, t
  ret out
.end
.func start_addrs() -> ref
  .local l:ref, a:ref, t:ref, out:ref, addr:ref, z:i64, one:i64, two:i64
  const addr, "127.0.0.1:0"
  const z, 0
  intr l, net.listen_opts, addr, z
  intr a, net.local_addr, l
  spawn t, addrs, l
  const two, 2
  const one, 1
  anew out, two, ref
  asetr out, z, a
  asetr out, one, t
  ret out
.end
; listen_addr listens with flags fl and hands the listener to a child
; that holds it until cancelled; it returns [address, child].
.func listen_addr(addr:ref, fl:i64) -> ref
  .local l:ref, a:ref, t:ref, out:ref, z:i64, one:i64, two:i64
  const z, 0
  intr l, net.listen_opts, addr, fl
  intr a, net.local_addr, l
  spawn t, hold, l
  const two, 2
  const one, 1
  anew out, two, ref
  asetr out, z, a
  asetr out, one, t
  ret out
.end
.func hold(l:ref) -> void
  .local ev:ref
  evnew ev
  evwait ev
  retv
.end
; try_listen returns the kind of the error of net.listen_opts, or "ok".
.func try_listen(addr:ref, fl:i64) -> ref
  .local l:ref, e:ref, k:ref
  .try b, x, h, e
b:
  intr l, net.listen_opts, addr, fl
x:
  intr _, net.close, l
  const k, "ok"
  ret k
h:
  errkind k, e
  ret k
.end
`

// serverIOBus starts a bus with one engine and a listener on a free
// loopback port (made by a task, owned by it), returned as a value with
// its address.
func serverIOBus(t *testing.T) (*bus.Bus, *bus.Member, *vmloop.Program) {
	t.Helper()
	var m *bus.Member
	b := testkit.Bus(t, bus.Config{Workers: 2}, func(b *bus.Bus) {
		m = testkit.Engine(t, b, "io", sched.EngineRuntimeConfig{TimerWheel: testkit.Wheel()}, bus.CapAll)
	})
	return b, m, testkit.Prog(t, b, serverIOProg)
}

// listenerTask runs start_<fn>(args...), which listens on a free
// loopback port and spawns fn(listener, args...), and returns fn's task
// and the port's address.
func listenerTask(t *testing.T, m *bus.Member, p *vmloop.Program, fn string, args ...vmloop.Value) (*sched.Task, string) {
	t.Helper()
	st, err := m.Spawn(nil, p, "start_"+fn, args...)
	require.NoError(t, err)
	return addrAndTask(t, testkit.Await(t, st))
}

// addrAndTask unpacks a starter's [address, task] outcome.
func addrAndTask(t *testing.T, o sched.Outcome) (*sched.Task, string) {
	t.Helper()
	require.Equal(t, sched.Success, o.Kind, "%v", o)
	el := o.Value.Elems()
	require.Len(t, el, 2)
	task, ok := el[1].Obj().(*sched.Task)
	require.True(t, ok, "element 1 is %v", el[1])
	return task, el[0].String()
}

func TestServerIO(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		_, m, p := serverIOBus(t)
		t.Run("read_n bounded", func(t *testing.T) {
			task, addr := listenerTask(t, m, p, "serve_bounded")
			c := dialListener(t, addr)
			_, err := c.Write([]byte("abcdef"))
			require.NoError(t, err)
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			// Each read_n took at most 3 bytes into [2, 5): the last 3 are there.
			require.Equal(t, "\x00\x00def"+strings.Repeat("\x00", 11), o.Value.String())
		})
		t.Run("read_n out of range", func(t *testing.T) {
			for _, r := range [][2]int64{{-1, 2}, {0, 0}, {6, 3}, {9, 1}, {0, 9}} {
				task, addr := listenerTask(t, m, p, "bad_read", vmloop.I64(r[0]), vmloop.I64(r[1]))
				dialListener(t, addr)
				o := testkit.Await(t, task)
				require.Equal(t, sched.Success, o.Kind, "%v", o)
				require.Contains(t, o.Value.String(), "IoErrornet.read_n: no room", "range %v", r)
			}
		})
		t.Run("shutdown write", func(t *testing.T) {
			task, addr := listenerTask(t, m, p, "reply_and_half_close")
			c := dialListener(t, addr)
			// More than the server reads before it replies: closing with
			// this unread would reset the connection.
			_, err := c.Write([]byte(strings.Repeat("x", 4096)))
			require.NoError(t, err)
			got, err := io.ReadAll(c) // the reply, then EOF from the shutdown
			require.NoError(t, err)
			require.Equal(t, "reply", string(got))
			c.(*net.TCPConn).CloseWrite()
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, int64(4096-4), o.Value.Int(), "the rest of the input, read after the reply")
		})
		t.Run("addresses", func(t *testing.T) {
			task, addr := listenerTask(t, m, p, "addrs")
			c := dialListener(t, addr)
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "%v", o)
			require.Equal(t, c.RemoteAddr().String()+"|"+c.LocalAddr().String(), o.Value.String())
		})
		t.Run("reuseport", func(t *testing.T) {
			a, err := m.Spawn(nil, p, "listen_addr", vmloop.Str("127.0.0.1:0"), vmloop.I64(bus.ListenReusePort))
			require.NoError(t, err)
			holder, addr := addrAndTask(t, testkit.Await(t, a))
			defer m.Cancel(holder)
			for _, c := range []struct {
				fl   int64
				want string
			}{{bus.ListenReusePort, "ok"}, {0, "IoError"}, {2, "Error"}} {
				tl, err := m.Spawn(nil, p, "try_listen", vmloop.Str(addr), vmloop.I64(c.fl))
				require.NoError(t, err)
				require.Equal(t, c.want, testkit.Await(t, tl).Value.String(), "flags %d", c.fl)
			}
		})
	})
}

// dialListener connects to addr, closed at the test's end.
func dialListener(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}
