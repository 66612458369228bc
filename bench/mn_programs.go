package bench

import "strings"

// Programs of the M:N benchmarks.
const (
	// srcSleeper sleeps d ns n times and returns each sleep's lateness
	// (actual − requested, ns) in an array.
	srcSleeper = `
.abi 1.1
.func main(n:i64, d:i64) -> ref
  .local i:i64, t0:i64, t1:i64, out:ref
  anew  out, n, i64
  const i, 0
l:
  jge   i, n, e
  intr  t0, time.now
  intr  _, time.sleep, d
  intr  t1, time.now
  sub   t1, t1, t0
  sub   t1, t1, d
  aseti out, i, t1
  addi  i, i, 1
  jmp   l
e:
  ret   out
.end
`
	// srcTimerTicker sleeps with time.sleep_until to deadlines start +
	// i × p (i = 1 … n, start: its first time.now) and returns how late it
	// ran after each sleep (time.now − deadline, ns) in an array.
	srcTimerTicker = `
.abi 1.1
.func main(n:i64, p:i64) -> ref
  .local i:i64, dl:i64, t:i64, out:ref
  anew  out, n, i64
  intr  dl, time.now
  const i, 0
l:
  jge   i, n, e
  add   dl, dl, p
  intr  _, time.sleep_until, dl
  intr  t, time.now
  sub   t, t, dl
  aseti out, i, t
  addi  i, i, 1
  jmp   l
e:
  ret   out
.end
`
	// srcWaker waits on ev n times and reports each dispatch to the host.
	srcWaker = `
.func main(ev:ref, n:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, n, d
  evwait ev
  intr  _, bench.woke
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end
`
	// srcHog spins forever and reports every 2^20 iterations.
	srcHog = `
.func main() -> i64
  .local x:i64, y:i64
  const x, 0
l:
  addi  x, x, 1
  andi  y, x, 1048575
  jnz   y, l
  intr  _, bench.tick
  jmp   l
.end
`
	srcSpawnMany = `
.func main(n:i64) -> i64
  .local i:i64, sum:i64, v:i64, ts:ref, t:ref
  anew  ts, n, ref
  const i, 0
sp:
  jge   i, n, js
  spawn t, child, i
  asetr ts, i, t
  addi  i, i, 1
  jmp   sp
js:
  const i, 0
  const sum, 0
jl:
  jge   i, n, done
  agetr t, ts, i
  joini v, t
  add   sum, sum, v
  addi  i, i, 1
  jmp   jl
done:
  ret   sum
.end
.func child(x:i64) -> i64
  ret   x
.end
`
	// srcHandOff: main spawns two children a round and works on; the
	// second child takes the lifo slot and pushes the first to the run
	// queue, where the other, idle worker takes it, runs it and parks
	// again (a busy worker handing work to an idle one, one task at a
	// time).
	srcHandOff = `
.func main(n:i64, spin:i64) -> i64
  .local i:i64, t:ref, u:ref, k:i64
  const i, 0
sp:
  jge   i, n, done
  spawn t, child, i
  spawn u, child, i
  free  t
  free  u
  const k, 0
w:
  jge   k, spin, nx
  addi  k, k, 1
  jmp   w
nx:
  addi  i, i, 1
  jmp   sp
done:
  ret   i
.end
.func child(x:i64) -> i64
  ret   x
.end
`
	srcChained = `
.func main(n:i64, ev:ref) -> i64
  spawn  _, link, n, ev
  evwait ev
  ret    n
.end
.func link(n:i64, ev:ref) -> i64
  .local m:i64
  jgti     n, 0, more
  evsignal ev
  ret      n
more:
  subi     m, n, 1
  spawn    _, link, m, ev
  ret      n
.end
`
	srcYieldMany = `
.func main(k:i64, m:i64) -> i64
  .local i:i64, ts:ref, t:ref, v:i64, sum:i64
  anew  ts, k, ref
  const i, 0
sp:
  jge   i, k, js
  spawn t, yielder, m
  asetr ts, i, t
  addi  i, i, 1
  jmp   sp
js:
  const i, 0
  const sum, 0
jl:
  jge   i, k, done
  agetr t, ts, i
  joini v, t
  add   sum, sum, v
  addi  i, i, 1
  jmp   jl
done:
  ret   sum
.end
.func yielder(m:i64) -> i64
  .local i:i64
  const i, 0
l:
  jge   i, m, d
  yield
  addi  i, i, 1
  jmp   l
d:
  ret   i
.end
`
)

// srcSleeperMarked is srcSleeper with each lateness also given to
// bench.mark (a trace user log: cmd/jade-tailtrace -shape sleep).
var srcSleeperMarked = strings.Replace(srcSleeper, "  aseti out, i, t1\n", "  aseti out, i, t1\n  intr  _, bench.mark, t1\n", 1)
