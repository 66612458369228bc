package perf

import (
	"github.com/jadevm/jade/bench"
)

// mapKeys is the keys of one map_put_get run: 500k keys (a map of about
// 32 MB, within the default heap limit of 64 MiB).
const mapKeys = 500_000

// mapPutGet: n puts then n gets of scattered i64 keys (bench/maps.go), per
// key, on Jade's Go and C loops, a Go map[int64]int64 (at GOMAXPROCS 1),
// and Lua tables in lua5.4 and LuaJIT (the loop's CPU time, measured in
// the Lua process: its start is not counted; absent when not installed).
// Not gated: the rows place the map among peers (docs/PERFORMANCE.md,
// "Maps").
func mapPutGet(o *Options) ([]Result, error) {
	return withEnv(func(e *bench.Env) ([]Result, error) {
		reps := 3
		if o.Quick {
			reps = 1
		}
		body := func(run func(n int) error) func(k int) error {
			return func(k int) error {
				for range k {
					if err := run(mapKeys); err != nil {
						return err
					}
				}
				return nil
			}
		}
		perKey := func(ns float64) float64 { return ns / mapKeys }
		jg, err := timeOp(o, reps, body(e.MapPutGetJadeGo))
		if err != nil {
			return nil, err
		}
		g := goProcs(1, func() float64 {
			g, _ := timeOp(o, reps, body(bench.MapPutGetGo))
			return g
		})
		rs := []Result{lowerBetter("map_put_get", "jade-go vs go map", "ns", perKey(jg), perKey(g), 0, "", o.Reps)}
		jade, who := jg, "jade-go"
		if bench.NativeLoop() {
			jn, err := timeOp(o, reps, body(e.MapPutGetJade))
			if err != nil {
				return nil, err
			}
			rs = append(rs, lowerBetter("map_put_get", "jade-native vs go map", "ns", perKey(jn), perKey(g), 0, "", o.Reps))
			jade, who = jn, "jade-native"
		}
		for _, lua := range []string{"lua5.4", "luajit"} {
			var xs []float64
			var err error
			for range max(o.Reps, 1) {
				d, e := bench.MapPutGetLua(lua, mapKeys)
				if e != nil {
					err = e
					break
				}
				xs = append(xs, float64(d.Nanoseconds()))
			}
			if err != nil {
				rs = append(rs, Result{Name: "map_put_get", Metric: who + " vs " + lua, Absent: err.Error()})
				continue
			}
			rs = append(rs, lowerBetter("map_put_get", who+" vs "+lua+" table", "ns", perKey(jade), perKey(median(xs)), 0, "", o.Reps))
		}
		return rs, nil
	})
}
