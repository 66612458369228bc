// Package bench holds the bodies of the side-by-side benchmarks: each Jade
// workload next to its Go (or gopher-lua) baseline. The go test benchmarks
// in this package and the `jade perf` harness both call these bodies, so
// the two always measure the same thing.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package bench

// Jade programs of the benchmarks. Each main takes the iteration count.
const (
	srcSpawnJoin = `
.abi 1.0
.func main(n:i64) -> i64
  .local i:i64, t:ref
  const i, 0
loop:
  jge   i, n, done
  spawn t, noop
  joinv t
  free  t
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
.func noop() -> i64
  .local z:i64
  const z, 0
  ret   z
.end
`
	srcPingPong = `
.abi 1.0
.func main(n:i64) -> i64
  .local ping:ref, pong:ref, t:ref, i:i64
  evnew ping
  evnew pong
  spawn t, ponger, ping, pong, n
  const i, 0
loop:
  jge      i, n, done
  evsignal ping
  evwait   pong
  addi     i, i, 1
  jmp      loop
done:
  joinv t
  ret   i
.end
.func ponger(ping:ref, pong:ref, n:i64) -> i64
  .local i:i64
  const i, 0
loop:
  jge      i, n, done
  evwait   ping
  evsignal pong
  addi     i, i, 1
  jmp      loop
done:
  ret i
.end
`
	srcYield = `
.abi 1.0
.func main(n:i64) -> i64
  .local i:i64
  const i, 0
loop:
  jge   i, n, done
  yield
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
`
	// srcParked parks n tasks on one event and returns.
	srcParked = `
.abi 1.0
.func main(n:i64, gate:ref) -> i64
  .local i:i64, t:ref
  const i, 0
loop:
  jge   i, n, done
  spawn t, sleeper, gate
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
.func sleeper(gate:ref) -> i64
  .local z:i64
  evwait gate
  const z, 0
  ret z
.end
`
)

// luaFib is fib for gopher-lua, Lua 5.4 and LuaJIT.
const luaFib = `
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
return fib(30)
`
