package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/vmloop"
)

// The long-step benchmark (docs/ISA.md, safe points): a 1 ms periodic
// ticker task runs beside tasks that repeat one long instruction each (a
// 32 MiB sconcat, bnew or anew, the cycle check of an asetr over a 4 Mi
// element graph, a throw through 9,000 frames of a function with 20,000
// .try ranges, a bfind of a 4 MiB needle in 8 MiB, a spawn and join of a
// task whose argument is a 1M-element ref array, a spawn and join of a
// task whose result is one, a send and receive of one on a channel, a task that makes 4M objects and ends, an
// evbcast to 200,000 waiters), one per worker, and the ticker's lateness against its
// schedule (start + i×1 ms, start being the first tick's nominal instant;
// the scheduler's clock) is reported. A step that preemption cannot cut shows as lateness of about
// its own duration.

// LongSteps names the long steps LongStepTicker runs, in order.
var LongSteps = []string{"none", "sconcat", "bnew", "anew", "asetr", "throw", "bfind", "spawnarg", "joinres", "chanmsg", "objects", "evbcast"}

// srcLongStep holds the programs of the long steps; main loops forever.
const srcLongStep = `
.abi 1.5
.func ticker(n:i64) -> i64
  .local job:ref, p:i64, pol:i64, i:i64, at:i64, now:i64, t0:i64, due:i64
  const   p, 1000000
  const   pol, 3
  intr    job, time.periodic, p, pol
  intr    t0, time.tick, job
  const   i, 1
loop:
  intr    at, time.tick, job
  intr    now, time.now
  mul     due, i, p
  add     due, due, t0
  sub     now, now, due
  intr    _, bench.late, now
  addi    i, i, 1
  jle     i, n, loop
  ret     i
.end

.func none() -> i64
  .local i:i64
  const   i, 0
loop:
  addi    i, i, 1
  jmp     loop
.end

.func sconcat() -> i64
  .local n:i64, b:ref, s:ref, x:ref
  const   n, 16777216
  bnew    b, n
  btos    s, b
  free    b
loop:
  sconcat x, s, s
  free    x
  jmp     loop
.end

.func bnew() -> i64
  .local n:i64, x:ref
  const   n, 33554432
loop:
  bnew    x, n
  free    x
  jmp     loop
.end

.func anew() -> i64
  .local n:i64, x:ref
  const   n, 4194304
loop:
  anew    x, n, i64
  free    x
  jmp     loop
.end

.func asetr() -> i64
  .local n:i64, i:i64, a:ref, b:ref, o:ref, z:i64, one:i64
  const   n, 2048
  const   z, 0
  const   one, 1
  anew    a, n, ref
  const   i, 0
fill:
  anew    b, n, ref
  asetr   a, i, b
  addi    i, i, 1
  jlt     i, n, fill
  anew    o, one, ref
loop:
  asetr   o, z, a
  jmp     loop
.end

.func bfind() -> i64
  .local n:i64, m:i64, h:ref, x:ref, z:i64, one:i64, r:i64, k:i64
  const   n, 8388608
  const   m, 4194304
  bnew    h, n
  bnew    x, m
  subi    k, m, 1
  const   one, 1
  bset    x, k, one
  const   z, 0
loop:
  bfind   r, h, x, z
  jmp     loop
.end

.func spawnarg() -> i64
  .local n:i64, i:i64, a:ref, s:ref, t:ref, r:i64
  const   n, 1000000
  anew    a, n, ref
  const   s, "x"
  const   i, 0
fill:
  asetr   a, i, s
  addi    i, i, 1
  jlt     i, n, fill
loop:
  spawn   t, arglen, a
  joini   r, t
  free    t
  jmp     loop
.end

.func arglen(a:ref) -> i64
  .local n:i64
  alen    n, a
  ret     n
.end

.func joinres() -> i64
  .local t:ref, r:i64
loop:
  spawn   t, joinone
  joini   r, t
  free    t
  jmp     loop
.end

.func joinone() -> i64
  .local n:i64, t:ref, a:ref
  const   n, 1000000
  spawn   t, mkres, n
  joinr   a, t
  alen    n, a
  ret     n
.end

.func chanmsg() -> i64
  .local n:i64, ch:ref, a:ref, b:ref
  const   n, 1
  intr    ch, chan.new_ref, n
  const   n, 1000000
  call    a, mkres, n
loop:
  intr    _, chan.send_ref, ch, a
  intr    b, chan.recv_ref, ch
  free    b
  jmp     loop
.end

.func mkres(n:i64) -> ref
  .local i:i64, a:ref, s:ref
  anew    a, n, ref
  const   s, "x"
  const   i, 0
fill:
  asetr   a, i, s
  addi    i, i, 1
  jlt     i, n, fill
  ret     a
.end

.func objects() -> i64
  .local n:i64, t:ref, r:i64
  const   n, 4000000
loop:
  spawn   t, mkobjs, n
  joini   r, t
  free    t
  jmp     loop
.end

.func mkobjs(n:i64) -> i64
  .local i:i64, z:i64, a:ref
  const   i, 0
  const   z, 0
more:
  anew    a, z, i64
  addi    i, i, 1
  jlt     i, n, more
  ret     i
.end

.func evbcast() -> i64
  .local n:i64, i:i64, ev:ref, t:ref
  const   n, 200000
  evnew   ev
loop:
  const   i, 0
more:
  spawn   t, waiter, ev
  free    t
  addi    i, i, 1
  jlt     i, n, more
  yield
  evbcast ev
  jmp     loop
.end

.func waiter(ev:ref) -> i64
  .local z:i64
  evwait  ev
  const   z, 0
  ret     z
.end

.func throw() -> i64
  .local d:i64, w:i64, e:ref
loop:
  const   d, 9000
  .try    t0, t1, h, e
t0:
  call    w, deep, d
t1:
  jmp     loop
h:
  jmp     loop
.end
`

// srcDeep is deep(d): recursion d deep, then a throw; its first
// instructions lie in 20,000 one-instruction .try ranges that do not
// cover the call, which every frame of the unwind used to scan.
func srcDeep() string {
	var sb strings.Builder
	sb.WriteString(".func deep(d:i64) -> i64\n  .local e:ref, m:ref, x:i64\n  jmp start\n")
	const ranges = 20000
	for i := 0; i < ranges; i++ {
		fmt.Fprintf(&sb, "  .try q%d, q%d, h, e\nq%d:\n  nop\n", i, i+1, i)
	}
	fmt.Fprintf(&sb, "q%d:\n  ret d\nh:\n  ret d\n", ranges)
	sb.WriteString("start:\n  jz d, bottom\n  subi x, d, 1\n  call x, deep, x\n  ret x\nbottom:\n  const m, \"deep\"\n  newerr e, m\n  throw e\n.end\n")
	return sb.String()
}

// LongStepTicker runs a 1 ms ticker for ticks ticks beside one task per
// worker repeating the long step named step (LongSteps; "none" is a plain
// counting loop), on a runtime with the given workers, and returns the
// ticker's lateness.
func LongStepTicker(workers int, step string, ticks int) (Latencies, error) {
	rt, err := jade.New(jade.Options{Workers: workers, Stdout: nil})
	if err != nil {
		return Latencies{}, err
	}
	defer rt.Shutdown(context.Background())
	var mu sync.Mutex
	lat := make([]time.Duration, 0, ticks)
	rt.RegisterIntrinsic("bench.late", []vmloop.Type{vmloop.TI64}, vmloop.TVoid, 0, func(c *bus.Call) (vmloop.Value, error) {
		mu.Lock()
		lat = append(lat, time.Duration(c.Args()[0].Int()))
		mu.Unlock()
		return vmloop.Void(), nil
	})
	p, err := rt.Load("longstep.jasm", []byte(srcLongStep+srcDeep()))
	if err != nil {
		return Latencies{}, err
	}
	var hogs []*jade.Task
	for i := 0; i < workers; i++ {
		h, err := rt.Spawn(p, step)
		if err != nil {
			return Latencies{}, err
		}
		hogs = append(hogs, h)
	}
	time.Sleep(20 * time.Millisecond) // the hogs are running
	tk, err := rt.Spawn(p, "ticker", vmloop.I64(int64(ticks)))
	if err != nil {
		return Latencies{}, err
	}
	o, err := tk.Wait(context.Background())
	for _, h := range hogs {
		h.Cancel()
	}
	if err != nil {
		return Latencies{}, err
	}
	if o.Kind.String() != "Success" {
		return Latencies{}, fmt.Errorf("bench: ticker: %v", o)
	}
	for _, h := range hogs {
		h.Wait(context.Background())
	}
	mu.Lock()
	defer mu.Unlock()
	return Summarize(lat), nil
}
