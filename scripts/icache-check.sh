#!/usr/bin/env bash
# icache-check.sh — instructions, L1 instruction-cache misses and locked
# instructions per operation of the task-shape benchmarks, at 1 worker,
# under callgrind's cache simulation: the figures that stay the same from
# run to run on a noisy machine (docs/PERFORMANCE.md, "Methodology").
#
#   scripts/icache-check.sh [BENCH.test]
#   ICACHE_SITES=1 scripts/icache-check.sh   # and where the locked ones are
#
# With ICACHE_SITES=1 each row is followed by its locked instructions per
# operation by address: the function holding the instruction and the
# source line it came from (often sync/atomic's, inlined), as
# `go tool addr2line` names them.
#
# Builds bench.test with the kept profile (pgo/jade.pgo) unless one is
# given. Each row runs the benchmark at two counts and divides the
# difference, so start-up is left out. More than about two L1
# instruction misses per operation means the binary's layout put more of
# the row's hot code lines in one cache set than it has ways: a wall-clock
# A/B then measures the layout, not the change. Installs valgrind with
# apt-get when it is missing and it can; otherwise it says so and exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."

target=icache-check
cache=build/cache/icache-check
. scripts/platforms/lib.sh

if ! command -v valgrind >/dev/null 2>&1; then
	if ! install_pkgs valgrind || ! command -v valgrind >/dev/null 2>&1; then
		echo "$target: valgrind is absent and could not be installed: skipping"
		exit 0
	fi
fi
bin=${1:-}
if [ -z "$bin" ]; then
	bin=build/icache-check/bench.test
	mkdir -p "$(dirname "$bin")"
	go test -c -pgo=pgo/jade.pgo -o "$bin" ./bench/ || exit 1
fi
bin=$(realpath "$bin")
locks=$(mktemp)
trap 'rm -f "$locks" "$locks".*' EXIT
# The locked instructions' addresses: lock-prefixed ones and xchg with
# memory (an atomic store on amd64).
objdump -d --no-show-raw-insn "$bin" | awk '/^ +[0-9a-f]+:\t(lock |xchg .*\()/ {sub(":", "", $1); print $1}' >"$locks"

# run BENCH COUNT OUT: callgrind's totals (Ir, I1 misses) of BENCH/jade
# run COUNT times, with per-instruction counts in OUT.
run() {
	(cd bench && GOGC=off JADE_POLLER=epoll GODEBUG=asyncpreemptoff=1 JADE_BENCH_WORKERS=1 GOMAXPROCS=1 \
		valgrind --tool=callgrind --cache-sim=yes --dump-instr=yes --callgrind-out-file="$3" \
		"$bin" -test.run '^$' -test.bench "^Benchmark$1\$/jade" -test.benchtime "$2x" 2>&1) |
		awk '/I   refs:/ {gsub(",", "", $NF); ir=$NF} /I1  misses:/ {gsub(",", "", $NF); i1=$NF} END {print ir, i1}'
}

# locked OUT SITES: how many times the locked instructions ran in OUT;
# each one's address and count go into SITES, a line each (sites).
locked() {
	python3 - "$locks" "$1" "$2" <<'EOF'
import collections, sys
locks = set(int(l, 16) for l in open(sys.argv[1]))
by = collections.Counter()
n, addr, skip, npos = 0, 0, False, 1
for line in open(sys.argv[2]):
    if line.startswith('positions:'):
        npos = len(line.split()) - 1  # instr, and line when dumped: Ir follows them
        continue
    if line.startswith('calls='):
        skip = True
        continue
    if not line or line[0] not in '0123456789+-*':
        continue
    p = line.split()
    a = p[0]
    if a.startswith('0x'):
        addr = int(a, 16)
    elif a[0] in '+-':
        d = int(a[1:], 16) if a[1:].startswith('0x') else int(a[1:])
        addr += d if a[0] == '+' else -d
    if skip:
        skip = False
        continue
    if addr in locks and len(p) > npos:
        n += int(p[npos])
        by[addr] += int(p[npos])
print(n)
with open(sys.argv[3], 'w') as f:
    for a, c in by.items():
        f.write('%x %d\n' % (a, c))
EOF
}

# sites A B OPS: the locked instructions per operation by address, from
# the SITES files of two runs, with the function and source line of each.
sites() {
	python3 - "$1" "$2" "$3" "$bin" <<'EOF'
import os, subprocess, sys
def rd(p):
    return {int(a, 16): int(c) for a, c in (l.split() for l in open(p))}
a, b, n = rd(sys.argv[1]), rd(sys.argv[2]), int(sys.argv[3])
rows = sorted(((k, (v - a.get(k, 0)) / n) for k, v in b.items()), key=lambda r: -r[1])
rows = [r for r in rows if r[1] >= 0.05]
out = subprocess.run(['go', 'tool', 'addr2line', sys.argv[4]], input=''.join('0x%x\n' % k for k, _ in rows),
                     capture_output=True, text=True).stdout.split('\n')
for i, (k, v) in enumerate(rows):
    fn, line = out[2 * i], out[2 * i + 1]
    line = os.path.relpath(line) if line.startswith(os.getcwd()) else line.split('/src/')[-1]
    print('    %6.2f  %s  %s' % (v, fn.replace('github.com/jadevm/jade/', ''), line))
EOF
}

printf '%-14s %12s %12s %12s\n' row "instr/op" "I1 miss/op" "locked/op"
# row BENCH LO HI OPS: OPS operations between LO and HI runs.
row() {
	read -r ir1 m1 < <(run "$1" "$2" "$locks.a")
	read -r ir2 m2 < <(run "$1" "$3" "$locks.b")
	l1=$(locked "$locks.a" "$locks.sa")
	l2=$(locked "$locks.b" "$locks.sb")
	awk -v r="$1" -v a="$ir1" -v b="$ir2" -v c="$m1" -v d="$m2" -v e="$l1" -v f="$l2" -v n="$4" \
		'BEGIN {printf "%-14s %12.0f %12.2f %12.2f\n", r, (b-a)/n, (d-c)/n, (f-e)/n}'
	if [ -n "${ICACHE_SITES:-}" ]; then
		sites "$locks.sa" "$locks.sb" "$4"
	fi
}
row SpawnJoin 1000 21000 20000
row PingPong 1000 11000 10000
row ChainedSpawn 1 3 20000
row SpawnMany 1 3 20000
row YieldMany 1 3 200000
row Yield 10000 110000 100000
