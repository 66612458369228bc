#!/usr/bin/env bash
# resp-bench.sh — examples/resp_ping.jasm vs redis-server vs a Go net RESP
# server (cmd/resp-go), side by side under redis-benchmark -t ping
# (-c 50 -n 200000, with and without -P 16). Each server runs on CPU 0 and
# redis-benchmark on CPU 1 (taskset); Jade runs with --workers 1 beside
# redis-server's single thread. Prints a table of requests per second and
# the ratios, and writes it to -o FILE (default perf-resp.txt).
#
#   scripts/resp-bench.sh [-o FILE] [-n REQUESTS] [-c CLIENTS] [-q PERCENT] [-r REPS]
#
# -r REPS runs the three servers REPS times in turn and reports the median
# of each figure (this machine's run-to-run spread is large; 5 is a good
# number).
#
# -q PERCENT caps each server at PERCENT of one CPU (a CFS bandwidth
# cgroup, 10 ms period; needs root and a writable cgroup cpu controller).
# On a 2-CPU machine the single-threaded redis-benchmark client is
# otherwise the limit and every server lands at the same requests/s;
# capped, the server is the limit and requests/s compares server capacity.
#
# Installs redis-server and redis-tools with apt-get when they are missing
# and it can (root, or password-less sudo); otherwise it says what is
# missing, runs what it can and still exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."

out=perf-resp.txt
requests=200000
clients=50
quota=
reps=1
while getopts "o:n:c:q:r:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    n) requests=$OPTARG ;;
    c) clients=$OPTARG ;;
    q) quota=$OPTARG ;;
    r) reps=$OPTARG ;;
    *) sed -n '2,25p' "$0"; exit 0 ;;
  esac
done

say() { echo "resp-bench: $*" >&2; }

# --- tools ------------------------------------------------------------------
missing=()
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v redis-server >/dev/null || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else sudo=(false); fi
  fi
  if [ "${sudo[0]:-}" != false ]; then
    say "installing ${missing[*]} with apt-get"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null 2>&1 || say "apt-get install ${missing[*]} failed"
  else
    say "not root and no password-less sudo: cannot install ${missing[*]}"
  fi
fi
have_bench=1; have_redis=1
command -v redis-benchmark >/dev/null || { have_bench=0; say "MISSING: redis-benchmark (Debian package redis-tools): no measurement possible"; }
command -v redis-server >/dev/null || { have_redis=0; say "MISSING: redis-server (Debian package redis-server): the redis column stays empty"; }

# --- builds -----------------------------------------------------------------
make build >/dev/null || { say "make build failed"; exit 1; }
go build -o bin/resp-go ./cmd/resp-go || { say "building cmd/resp-go failed"; exit 1; }
if [ $have_bench = 0 ]; then
  say "built bin/jade and bin/resp-go; install redis-tools (and redis-server) to measure"
  exit 0
fi

# --- CPU placement ----------------------------------------------------------
srv=(); cli=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  srv=(taskset -c 0); cli=(taskset -c 1)
  placement="server on CPU 0, redis-benchmark on CPU 1 (taskset)"
else
  placement="NOT pinned (taskset missing or fewer than 2 CPUs)"
  say "$placement"
fi

# --- CPU cap (-q) ------------------------------------------------------------
# cgroup: the directory whose cgroup.procs takes a server, or empty.
cgroup=
if [ -n "$quota" ]; then
  period=10000
  q=$(awk -v p="$quota" -v per=$period 'BEGIN { printf "%d", p * per / 100 }')
  if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    cgroup=/sys/fs/cgroup/resp-bench.$$
    mkdir "$cgroup" 2>/dev/null && echo "$q $period" >"$cgroup/cpu.max" 2>/dev/null || cgroup=
  elif [ -w /sys/fs/cgroup/cpu ]; then
    cgroup=/sys/fs/cgroup/cpu/resp-bench.$$
    mkdir "$cgroup" 2>/dev/null && echo $period >"$cgroup/cpu.cfs_period_us" &&
      echo "$q" >"$cgroup/cpu.cfs_quota_us" 2>/dev/null || cgroup=
  fi
  if [ -n "$cgroup" ]; then
    placement="$placement; each server capped at $quota% of a CPU (cgroup CPU bandwidth, ${period} µs period)"
  else
    say "-q $quota: no writable cgroup CPU controller (root needed): running uncapped"
  fi
fi

logdir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  rm -rf "$logdir"
  if [ -n "$cgroup" ]; then sleep 0.2; rmdir "$cgroup" 2>/dev/null; fi
}
trap cleanup EXIT

# wait_port PORT PID: until PORT accepts (10 s) or PID exits.
wait_port() {
  local i
  for i in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# stop PID: SIGINT (jade cancels main), then SIGKILL after 5 s.
stop() {
  local i
  kill -INT "$1" 2>/dev/null
  for i in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# cputicks PID: user+system CPU time of the process (all threads), in
# clock ticks.
cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
tck=$(getconf CLK_TCK 2>/dev/null || echo 100)

# bench NAME PORT PID: fills rps[NAME,TEST,P] for both pipelines, and
# cpu[NAME,P]: the server's CPU time per request (µs) over both tests.
declare -A rps cpu
bench() {
  local name=$1 port=$2 spid=$3 p line test val c0 c1
  for p in 1 16; do
    c0=$(cputicks "$spid")
    if ! line=$(timeout 600 "${cli[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -t ping \
        -c "$clients" -n "$requests" -P "$p" --csv 2>"$logdir/$name.bench.err"); then
      say "$name: redis-benchmark -P $p failed: $(tail -n 3 "$logdir/$name.bench.err")"
      continue
    fi
    c1=$(cputicks "$spid")
    cpu[$name,$p]="${cpu[$name,$p]:-} $(awk -v d=$((c1 - c0)) -v t="$tck" -v n="$requests" 'BEGIN { printf "%.2f", d * 1e6 / t / (2 * n) }')"
    # --csv: "PING_INLINE","123456.79",... (a header line first on redis 7)
    while IFS=, read -r test val _; do
      test=${test//\"/}; val=${val//\"/}
      case $test in PING_INLINE|PING_MBULK|PING_BULK) k=$name,${test/PING_BULK/PING_MBULK},$p; rps[$k]="${rps[$k]:-} $val" ;; esac
    done <<<"$line"
  done
}

# run NAME PORT CMD...: start the server pinned, benchmark it, stop it.
run() {
  local name=$1 port=$2; shift 2
  if [ -n "$cgroup" ]; then
    # Join the cgroup before exec, so every thread of the server is capped.
    (echo "$BASHPID" >"$cgroup/cgroup.procs" && exec "${srv[@]}" "$@") >"$logdir/$name.log" 2>&1 &
  else
    "${srv[@]}" "$@" >"$logdir/$name.log" 2>&1 &
  fi
  pid=$!
  if ! wait_port "$port" "$pid"; then
    say "$name: server did not start: $(tail -n 5 "$logdir/$name.log")"
    stop "$pid"; pid=
    return
  fi
  say "$name: benchmarking on port $port"
  bench "$name" "$port" "$pid"
  stop "$pid"; pid=
}

jport=16380; rport=16379; gport=16381
for rep in $(seq "$reps"); do
  [ "$reps" -gt 1 ] && say "round $rep of $reps"
  run jade "$jport" bin/jade run --workers 1 examples/resp_ping.jasm "127.0.0.1:$jport"
  if [ $have_redis = 1 ]; then
    run redis "$rport" redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no
  fi
  run resp-go "$gport" bin/resp-go -addr "127.0.0.1:$gport"
done

# --- report -----------------------------------------------------------------
# med LIST: the median of a space-separated list of numbers (empty if none).
med() { tr ' ' '\n' <<<"${1:-}" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { # a / b, or - when either is missing
  if [ -n "${1:-}" ] && [ -n "${2:-}" ]; then awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; else echo -; fi
}
{
  echo "resp-bench: redis-benchmark -t ping -c $clients -n $requests; $placement; median of $reps round(s), servers in turn"
  echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
  echo "redis: $(redis-server --version 2>/dev/null | head -1 || echo missing); $(go version)"
  echo
  printf '%-22s %14s %14s %14s %14s %14s\n' "requests/s" jade redis-server resp-go "jade/redis" "jade/resp-go"
  for t in PING_INLINE PING_MBULK; do
    for p in 1 16; do
      j=$(med "${rps[jade,$t,$p]:-}"); r=$(med "${rps[redis,$t,$p]:-}"); g=$(med "${rps[resp-go,$t,$p]:-}")
      printf '%-22s %14s %14s %14s %14s %14s\n' "$t -P $p" "${j:--}" "${r:--}" "${g:--}" "$(ratio "$j" "$r")" "$(ratio "$j" "$g")"
    done
  done
  echo
  echo "server CPU per request (µs, user+system over both tests; lower is better)"
  for p in 1 16; do
    j=$(med "${cpu[jade,$p]:-}"); r=$(med "${cpu[redis,$p]:-}"); g=$(med "${cpu[resp-go,$p]:-}")
    printf '%-22s %14s %14s %14s %14s %14s\n' "ping -P $p" "${j:--}" "${r:--}" "${g:--}" "$(ratio "$r" "$j")" "$(ratio "$g" "$j")"
  done
  echo "(CPU ratios are redis/jade and resp-go/jade: above 1, jade needs less CPU per request)"
} | tee "$out"
say "written to $out"
exit 0
