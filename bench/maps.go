package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jadevm/jade/vmloop"
)

// The map_put_get workload: n puts of distinct i64 keys into an empty
// map, then n gets of the same keys, summing the values; the keys are
// i×7919+1 (scattered, so that Lua keeps them in its tables' hash part,
// not the array part that dense keys 1..n would use). One unit is one
// key put and got. The Jade, Go and Lua versions do the same operations.

// MapKeyStride spreads the keys of map_put_get.
const MapKeyStride = 7919

// srcMapPutGet is map_put_get in Jade assembly (ABI 1.6 maps).
const srcMapPutGet = `
.abi 1.6
.func main(n:i64) -> i64
  .local m:ref, i:i64, k:i64, v:i64, sum:i64, stride:i64
  intr    m, map.new_i64_i64
  const   stride, 7919
  const   i, 0
put:
  jge     i, n, got
  mul     k, i, stride
  addi    k, k, 1
  intr    _, map.iput_i64, m, k, i
  addi    i, i, 1
  jmp     put
got:
  const   i, 0
  const   sum, 0
get:
  jge     i, n, done
  mul     k, i, stride
  addi    k, k, 1
  intr    v, map.iget_i64, m, k
  add     sum, sum, v
  addi    i, i, 1
  jmp     get
done:
  free    m
  ret     sum
.end
`

// mapSum is the result map_put_get returns for n keys.
func mapSum(n int) int64 { return int64(n) * int64(n-1) / 2 }

// MapPutGetJade runs map_put_get on the runtime's default loop.
func (e *Env) MapPutGetJade(n int) error {
	v, err := e.Run("map_put_get", vmloop.I64(int64(n)))
	return mapCheck(v, n, err)
}

// MapPutGetJadeGo runs map_put_get on the pure-Go VM loop.
func (e *Env) MapPutGetJadeGo(n int) error {
	v, err := e.runGo("map_put_get", "main", vmloop.I64(int64(n)))
	return mapCheck(v, n, err)
}

func mapCheck(v int64, n int, err error) error {
	if err == nil && v != mapSum(n) {
		err = fmt.Errorf("bench: map_put_get(%d) = %d, want %d", n, v, mapSum(n))
	}
	return err
}

// MapPutGetGo is map_put_get on a Go map[int64]int64.
func MapPutGetGo(n int) error {
	m := map[int64]int64{}
	for i := range n {
		m[int64(i)*MapKeyStride+1] = int64(i)
	}
	var sum int64
	for i := range n {
		sum += m[int64(i)*MapKeyStride+1]
	}
	return mapCheck(sum, n, nil)
}

// luaMapPutGet is map_put_get on a Lua table; it prints the sum and the
// CPU nanoseconds of the loop (os.clock), excluding the process start.
const luaMapPutGet = `
local n = tonumber(arg[1])
local t0 = os.clock()
local m = {}
for i = 0, n - 1 do m[i * 7919 + 1] = i end
local sum = 0
for i = 0, n - 1 do sum = sum + m[i * 7919 + 1] end
local t1 = os.clock()
print(string.format("%d %d", sum, math.floor((t1 - t0) * 1e9)))
`

// MapPutGetLua runs map_put_get in the Lua interpreter bin (lua5.4,
// luajit) and returns the loop's CPU time. It reports an error when bin is
// not installed.
func MapPutGetLua(bin string, n int) (time.Duration, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return 0, fmt.Errorf("bench: map_put_get: %s not installed: %w", bin, err)
	}
	f, err := os.CreateTemp("", "map_put_get*.lua")
	if err != nil {
		return 0, fmt.Errorf("bench: map_put_get: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(luaMapPutGet); err != nil {
		f.Close()
		return 0, fmt.Errorf("bench: map_put_get: %w", err)
	}
	f.Close()
	out, err := exec.Command(path, f.Name(), strconv.Itoa(n)).Output()
	if err != nil {
		return 0, fmt.Errorf("bench: map_put_get: %s: %w", bin, err)
	}
	fields := strings.Fields(string(bytes.TrimSpace(out)))
	if len(fields) != 2 || fields[0] != strconv.FormatInt(mapSum(n), 10) {
		return 0, fmt.Errorf("bench: map_put_get: %s printed %q, want the sum %d and a time", bin, out, mapSum(n))
	}
	ns, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bench: map_put_get: %s: %w", bin, err)
	}
	return time.Duration(ns), nil
}
