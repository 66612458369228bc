//go:build linux

package bus_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The hostile shapes of the I/O safety probe: tasks that end (or are
// cancelled, or time out) with an operation in flight must never let that
// operation touch another connection, and a timed-out operation either did
// its work or did nothing.
const safetyProg = `
.abi 1.2
.func serve(addr:ref) -> void
  .local l:ref, c:ref, t:ref
  intr l, net.listen, addr
acc:
  intr c, net.accept, l
  spawn t, echo, c
  free t
  free c
  jmp acc
.end
.func echo(c:ref) -> i64
  .local buf:ref, n:i64, z:i64, sz:i64, e:ref
  .try b, x, h, e
  const sz, 256
  bnew buf, sz
  const z, 0
b:
loop:
  intr n, net.read, c, buf, z
  jeqi n, 0, eof
  intr _, net.write, c, buf, z, n
  jmp loop
eof:
  intr _, net.close, c
x:
  ret z
h:
  ret z
.end
; thief connects to a silent peer and reads under a timeout it does not
; catch: it ends (TimeoutError) right after its read was cancelled.
.func thief(addr:ref, d:i64) -> i64
  .local c:ref, buf:ref, n:i64, z:i64, sz:i64
  intr c, net.connect, addr
  const sz, 16
  bnew buf, sz
  const z, 0
  intr _, time.timeout, d
  intr n, net.read, c, buf, z
  ret n
.end
; reader connects and reads until cancelled.
.func reader(addr:ref) -> i64
  .local c:ref, buf:ref, n:i64, z:i64, sz:i64
  intr c, net.connect, addr
  const sz, 16
  bnew buf, sz
  const z, 0
  intr n, net.read, c, buf, z
  ret n
.end
; count reads from the connection it accepts, each read under timeout d,
; until EOF, and returns the bytes it got.
.func count(addr:ref, d:i64) -> i64
  .local l:ref, c:ref, buf:ref, n:i64, z:i64, sz:i64, total:i64, e:ref, k:ref, to:ref, is:i64
  intr l, net.listen, addr
  intr c, net.accept, l
  const sz, 4096
  bnew buf, sz
  const z, 0
  const total, 0
  const to, "TimeoutError"
loop:
  .try b, x, h, e
b:
  intr _, time.timeout, d
  intr n, net.read, c, buf, z
x:
  jeqi n, 0, done
  add total, total, n
  jmp loop
h:
  errkind k, e
  seq is, k, to
  jz is, rethrow
  jmp loop
done:
  ret total
rethrow:
  throw e
.end
; send_all connects and writes total bytes in chunks of sz, each write
; under timeout d, retrying the rest of a chunk only when its write timed
; out; it returns the bytes the writes reported.
.func send_all(addr:ref, d:i64, total:i64, sz:i64) -> i64
  .local c:ref, buf:ref, n:i64, z:i64, sent:i64, e:ref, k:ref, to:ref, is:i64, left:i64
  intr c, net.connect, addr
  bnew buf, sz
  const z, 0
  const sent, 0
  const to, "TimeoutError"
loop:
  sub left, total, sent
  jlei left, 0, done
  jlt left, sz, tail
  mov left, sz
tail:
  .try b, x, h, e
b:
  intr _, time.timeout, d
  intr n, net.write, c, buf, z, left
x:
  add sent, sent, n
  jmp loop
h:
  errkind k, e
  seq is, k, to
  jz is, rethrow
  jmp loop
done:
  intr _, net.close, c
  ret sent
rethrow:
  throw e
.end
; close_at_limit connects twice, leaves a child reading the second
; connection (the engine's one in-flight operation), then closes the first:
; its Close operation cannot be submitted.
.func close_at_limit(addr:ref) -> i64
  .local c1:ref, c2:ref, t:ref, z:i64, ms:i64
  intr c1, net.connect, addr
  intr c2, net.connect, addr
  spawn t, reader_on, c2
  const ms, 20000000
  intr _, time.sleep, ms
  intr _, net.close, c1
  const z, 0
  ret z
.end
.func reader_on(c:ref) -> i64
  .local buf:ref, n:i64, z:i64, sz:i64
  const sz, 16
  bnew buf, sz
  const z, 0
  intr n, net.read, c, buf, z
  ret n
.end
; stale_conn hands a connection to a reading child, then uses its own
; copy: a write (doclose 0) or a close (1). Both must be refused.
.func stale_conn(addr:ref, doclose:i64) -> ref
  .local c:ref, t:ref, s:ref, e:ref, buf:ref, z:i64, one:i64
  intr c, net.connect, addr
  spawn t, read_kind, c
  const z, 0
  const one, 1
  bnew buf, one
  .try b, x, h, e
b:
  jnz doclose, close
  intr _, net.write, c, buf, z, one
  jmp x
close:
  intr _, net.close, c
x:
  const s, "the parent's copy worked"
  cancel t
  ret s
h:
  cancel t
  errmsg s, e
  ret s
.end
; stale_file is stale_conn for a file held by a waiting child.
.func stale_file(path:ref) -> ref
  .local f:ref, t:ref, s:ref, e:ref, buf:ref, z:i64, one:i64, ev:ref
  const one, 1
  intr f, file.open, path, one
  evnew ev
  spawn t, hold, f, ev
  const z, 0
  bnew buf, one
  .try b, x, h, e
b:
  intr _, file.write, f, buf, z, one
x:
  const s, "the parent's copy worked"
  cancel t
  ret s
h:
  cancel t
  errmsg s, e
  ret s
.end
.func hold(f:ref, ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end
.func read_kind(c:ref) -> ref
  .local buf:ref, n:i64, z:i64, sz:i64, e:ref, s:ref
  const sz, 16
  bnew buf, sz
  const z, 0
  .try b, x, h, e
b:
  intr n, net.read, c, buf, z
x:
  const s, "read"
  ret s
h:
  errmsg s, e
  ret s
.end
; accept_one accepts (and closes) one probe connection, then waits in a
; second accept, which it keeps.
.func accept_one(addr:ref) -> i64
  .local l:ref, c:ref, z:i64
  intr l, net.listen, addr
  intr c, net.accept, l
  intr _, net.close, c
  intr c, net.accept, l
  const z, 0
  ret z
.end
; churn opens path n times, handing each handle to a child that closes it:
; the long-lived task keeps nothing per handle.
.func churn(path:ref, n:i64) -> i64
  .local f:ref, t:ref, z:i64, i:i64, v:i64
  const z, 0
  const i, 0
loop:
  jge i, n, done
  intr f, file.open, path, z
  spawn t, close_it, f
  joini v, t
  free t
  free f
  addi i, i, 1
  jmp loop
done:
  evnew f
  evwait f                    ; stays alive until cancelled
  ret i
.end
.func close_it(f:ref) -> i64
  .local z:i64
  intr _, file.close, f
  const z, 0
  ret z
.end
`

const abandonHog = `
.func hog() -> void
l:
  jmp l
.end
`

// silentPeer accepts connections and never writes; it closes them when the
// test ends.
func silentPeer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			if len(conns) > 512 { // the thieves' ends are closed by now
				for _, c := range conns[:256] {
					c.Close()
				}
				conns = append(conns[:0], conns[256:]...)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// echoClients runs n connections against the Jade echo server at addr,
// each sending one message unique to it and expecting it back first; it
// returns how many got something else (or nothing).
func echoClients(t *testing.T, addr string, n, par int) (misses int64, firstErr error) {
	var next atomic.Int64
	var bad atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				msg := fmt.Sprintf("conn %08d says hi", i)
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					once.Do(func() { firstErr = err })
					bad.Add(1)
					continue
				}
				c.SetDeadline(time.Now().Add(5 * time.Second))
				got := make([]byte, len(msg))
				_, err = c.Write([]byte(msg))
				if err == nil {
					_, err = io.ReadFull(c, got)
				}
				c.Close()
				if err != nil || string(got) != msg {
					if err == nil {
						err = fmt.Errorf("connection %d got %q", i, got)
					}
					once.Do(func() { firstErr = err })
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return bad.Load(), firstErr
}

// TestEndingReadNeverStealsAnotherConnectionsData: tasks ending with a
// read in flight (an uncaught 1 µs timeout, or a cancel) race a server
// accepting live connections; every live connection gets its own first
// message back. On io_uring a descriptor number closed while a read that
// names it was still queued was reused by an accept, and the queued read
// consumed the new connection's first message.
func TestEndingReadNeverStealsAnotherConnectionsData(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		srv := testkit.FreeAddr(t)
		serve, err := m.Spawn(nil, p, "serve", vmloop.Str(srv))
		require.NoError(t, err)
		waitListening(t, srv)
		silent := silentPeer(t)

		stop := make(chan struct{})
		var thieves sync.WaitGroup
		for g := range 4 {
			thieves.Add(1)
			go func() {
				defer thieves.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					var task *sched.Task
					var err error
					if g%2 == 0 {
						task, err = m.Spawn(nil, p, "thief", vmloop.Str(silent), vmloop.I64(1000))
					} else {
						task, err = m.Spawn(nil, p, "reader", vmloop.Str(silent))
						if err == nil {
							time.Sleep(time.Duration(i%50) * time.Microsecond)
							m.Cancel(task)
						}
					}
					if err != nil {
						t.Error(err)
						return
					}
					testkit.Await(t, task)
				}
			}()
		}
		misses, first := echoClients(t, srv, 4000, 4)
		close(stop)
		thieves.Wait()
		m.Cancel(serve)
		testkit.Await(t, serve)
		require.Zerof(t, misses, "live connections that lost their first message (first: %v)", first)
	})
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		require.Less(t, i, 500, "%s never listened: %v", addr, err)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTimedOutReadLosesNoBytes: a reader that retries after every
// TimeoutError counts every byte the client sent. A timed-out read's
// operation used to be cancelled and its completion dropped, with the
// bytes it had already consumed (and with a 1 ns timeout the reader never
// saw EOF).
func TestTimedOutReadLosesNoBytes(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		for _, d := range []int64{1000, 1} {
			addr := testkit.FreeAddr(t)
			task, err := m.Spawn(nil, p, "count", vmloop.Str(addr), vmloop.I64(d))
			require.NoError(t, err)
			waitConn := func() net.Conn {
				for i := 0; ; i++ {
					c, err := net.Dial("tcp", addr)
					if err == nil {
						return c
					}
					require.Less(t, i, 500, "dial: %v", err)
					time.Sleep(10 * time.Millisecond)
				}
			}
			c := waitConn()
			const total = 200_000
			chunk := make([]byte, 100)
			for sent := 0; sent < total; sent += len(chunk) {
				_, err := c.Write(chunk)
				require.NoError(t, err)
				if sent%10_000 == 0 {
					time.Sleep(100 * time.Microsecond) // many small reads
				}
			}
			c.Close()
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "count with a %d ns timeout: %v", d, o)
			require.EqualValues(t, total, o.Value.Int(), "bytes counted with a %d ns timeout", d)
		}
	})
}

// TestTimedOutWriteNeverSendsTwice: a writer that retries a chunk only
// after a TimeoutError sends every byte exactly once: a write whose
// operation completed after its timeout fired reports its bytes instead.
func TestTimedOutWriteNeverSendsTwice(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		const total = 300_000
		sent, got := sendAll(t, m, p, 1000, 1000, total)
		require.EqualValues(t, total, sent)
		require.EqualValues(t, total, got, "bytes the peer received")
	})
}

// TestCloseAtLimitClosesTheDescriptor: a net.close whose Close operation
// cannot be submitted (the engine's inFlightIO limit is taken by another
// task's read) still closes the descriptor: the peer reads EOF at once.
func TestCloseAtLimitClosesTheDescriptor(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{InFlightIO: 1})
		p := testkit.Prog(t, b, safetyProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		task, err := m.Spawn(nil, p, "close_at_limit", vmloop.Str(ln.Addr().String()))
		require.NoError(t, err)
		first, err := ln.Accept()
		require.NoError(t, err)
		defer first.Close()
		second, err := ln.Accept()
		require.NoError(t, err)
		defer second.Close()
		o := testkit.Await(t, task)
		require.Equal(t, sched.Success, o.Kind, "close_at_limit: %v", o)
		first.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := first.Read(make([]byte, 1))
		require.Equal(t, 0, n)
		require.ErrorIs(t, err, io.EOF, "the closed connection's peer")
		second.Close() // the reader sees EOF and ends
	})
}

// TestPassedHandlesLeaveNothingBehind: a long-lived task that opens
// handles and passes each to a child (the accept loop of a server) keeps
// no state per handle: its heap after GC does not grow with the cycles.
// Every handle used to leave an end hook behind on its maker.
func TestPassedHandlesLeaveNothingBehind(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		// objects returns the heap's live objects while a churn task of n
		// cycles, done with them, is still alive.
		objects := func(n int64) uint64 {
			closes := b.Scheduler().IOStats().Ops[evpoll.Close]
			task, err := m.Spawn(nil, p, "churn", vmloop.Str("/dev/null"), vmloop.I64(n))
			require.NoError(t, err)
			deadline := time.Now().Add(60 * time.Second)
			for b.Scheduler().IOStats().Ops[evpoll.Close]-closes < uint64(n) || task.State() != sched.Waiting {
				require.True(t, time.Now().Before(deadline), "churn of %d never finished", n)
				time.Sleep(2 * time.Millisecond)
			}
			var ms runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			m.Cancel(task)
			require.Equal(t, sched.Cancelled, testkit.Await(t, task).Kind)
			return ms.HeapObjects
		}
		objects(2_000) // pools and tables warm
		small := objects(2_000)
		large := objects(42_000)
		require.Lessf(t, int64(large)-int64(small), int64(4_000),
			"heap objects grew from %d to %d over 40,000 more handles", small, large)
	})
}

// TestPassedHandleIsStaleInTheParent: a handle passed at spawn belongs
// to the child; the parent's copy is refused with a clear error, for a
// write and a close on a socket and for a file (the parent used to write
// through it until the child closed the file).
func TestPassedHandleIsStaleInTheParent(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := ioBus(t, bus.CapAll, sched.ResourceLimits{})
		p := testkit.Prog(t, b, safetyProg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		for _, doclose := range []int64{0, 1} {
			task, err := m.Spawn(nil, p, "stale_conn", vmloop.Str(ln.Addr().String()), vmloop.I64(doclose))
			require.NoError(t, err)
			peer, err := ln.Accept()
			require.NoError(t, err)
			o := testkit.Await(t, task)
			require.Equal(t, sched.Success, o.Kind, "stale_conn: %v", o)
			require.Regexp(t, `^net\.(write|close): conn\(fd \d+\) belongs to task \d+, to which it was passed; only its owner may use it$`, o.Value.String())
			// The child was cancelled: its end closed the connection.
			peer.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = peer.Read(make([]byte, 1))
			require.ErrorIs(t, err, io.EOF, "the child's connection after its end")
			peer.Close()
		}
		o := testkit.SpawnAwait(t, m, p, "stale_file", vmloop.Str("/dev/null"))
		require.Equal(t, sched.Success, o.Kind, "stale_file: %v", o)
		require.Regexp(t, `^file\.write: file\(fd \d+\) belongs to task \d+`, o.Value.String())
		require.Eventually(t, func() bool { return m.Engine().InFlightIO() == 0 }, 5*time.Second, time.Millisecond)
	})
}

// TestCancelAfterAcceptClosesTheConnection: an accept whose completion
// won the task's wake, with the task cancelled before it resumed, closes
// the accepted descriptor (it used to leak: the peer never saw EOF).
func TestCancelAfterAcceptClosesTheConnection(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		b, m, _ := oneWorkerBus(t, nil)
		p := testkit.Prog(t, b, safetyProg+abandonHog)
		landed := 0
		for range 5 {
			addr := testkit.FreeAddr(t)
			acc, err := m.Spawn(nil, p, "accept_one", vmloop.Str(addr))
			require.NoError(t, err)
			waitListening(t, addr) // its connection is accepted and closed
			waitState(t, acc, sched.Waiting)
			hog, err := m.Spawn(nil, p, "hog") // the worker reaps the accept but runs the hog first
			require.NoError(t, err)
			waitState(t, hog, sched.Running)
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			ok := assertEventually(func() bool { return acc.State() == sched.Runnable }, 2*time.Second)
			require.NoError(t, m.Cancel(acc))
			o := testkit.Await(t, acc)
			m.Cancel(hog)
			testkit.Await(t, hog)
			if ok && o.Kind == sched.Cancelled {
				landed++
			}
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, err = c.Read(make([]byte, 1))
			c.Close()
			// EOF: accepted, then closed; a reset: never accepted, and the
			// listener closed with it in its backlog. A leak times out.
			if !errors.Is(err, syscall.ECONNRESET) {
				require.ErrorIs(t, err, io.EOF, "the accepted connection's peer (task %v)", o)
			}
		}
		require.NotZero(t, landed, "no cancel landed between the accept's wake and its resume")
	})
}

func assertEventually(cond func() bool, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Microsecond) {
		if cond() {
			return true
		}
	}
	return false
}
