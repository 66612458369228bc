#!/bin/sh
# Writes pgo/jade.pgo: the CPU profile that Go's profile-guided
# optimisation reads when `make build` builds bin/jade (go build -pgo).
# It is not a default.pgo beside cmd/jade: every build of that package
# (the tests', the cross-compiles') would then be a profile-guided one,
# about 40 s each from a cold cache. The profile is the scheduler's and the
# bus's side of the core benchmarks (spawn, join, wake, yield, channels,
# select, echo) and of examples/http.jasm under wrk (when wrk is
# installed). Samples inside the VM loop (vmloop.Exec.Run, the cgo
# loop) are left out: more inlining into the loop's dispatch switch made
# fib(30) run 1.6 % more instructions, while the loop itself gains
# nothing. Only samples with a frame of this module are kept, so the Go
# baselines beside Jade in `jade perf` are not tuned by it.
#
#   scripts/pgo.sh [OUT]     (default pgo/jade.pgo; about a minute)
#
# A host embedding the runtime can merge this file into its own main
# package's default.pgo (go tool pprof -proto a.pgo b.pgo > default.pgo).
set -eu
cd "$(dirname "$0")/.."
out=${1:-pgo/jade.pgo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -pgo=off -o "$tmp/bench.test" ./bench/
for b in SpawnJoin PingPong ChainedSpawn SpawnMany YieldMany Yield ChanPingPong ChanStream ChanFanIn Select4; do
	(cd bench && "$tmp/bench.test" -test.run '^$' -test.bench "^Benchmark$b\$/jade" \
		-test.benchtime 2s -test.cpuprofile "$tmp/$b.prof" >/dev/null)
done
(cd bench && "$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkEcho$/conns=(1|100)$/jade$' \
	-test.benchtime 2s -test.cpuprofile "$tmp/Echo.prof" >/dev/null)
if command -v wrk >/dev/null 2>&1; then
	go build -pgo=off -o "$tmp/jade" ./cmd/jade
	port=$((20000 + $$ % 20000))
	"$tmp/jade" run --workers 1 --cpuprofile "$tmp/http.prof" examples/http.jasm "127.0.0.1:$port" >/dev/null 2>&1 &
	pid=$!
	sleep 1
	wrk -t1 -c50 -d4s "http://127.0.0.1:$port/" >/dev/null
	kill -TERM "$pid"
	wait "$pid" || true
else
	echo "pgo.sh: wrk is not installed: the profile has no HTTP server part" >&2
fi
go tool pprof -proto -focus='github.com/jadevm/jade/' \
	-ignore='vmloop\.\(\*Exec\)\.(Run|runNative)$' "$tmp"/*.prof >"$out" 2>/dev/null
echo "pgo.sh: wrote $out ($(wc -c <"$out") bytes)"
