#!/usr/bin/env bash
# http-bench.sh — examples/http.jasm against Go's net/http and a raw Go
# server (a goroutine per net.Conn), each in a process of its own on CPU 0
# with the load on CPU 1: `jade perf`'s http scenario (wrk -t1 --latency
# at 50 and 400 connections: requests/s, server CPU per request, p99 and
# max) and http_mixed (light GETs at 1,000/s measured against their
# schedule beside 2 connections of /work?ms=20).
#
#   scripts/http-bench.sh [-r REPS] [-o FILE]
#
# -r REPS alternates the servers REPS times and reports medians (default
# 3); -o FILE also writes the report as JSON. Installs wrk with apt-get
# when it is missing and it can (root, or password-less sudo); otherwise it
# says so, runs http_mixed alone (it needs no wrk) and still exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."

reps=3
json=
while getopts "r:o:" opt; do
	case $opt in
	r) reps=$OPTARG ;;
	o) json=$OPTARG ;;
	*) sed -n '2,15p' "$0"; exit 2 ;;
	esac
done

target=http-bench
cache=build/cache/http-bench
. scripts/platforms/lib.sh

scenarios=http,http_mixed
if ! command -v wrk >/dev/null 2>&1; then
	if ! install_pkgs wrk || ! command -v wrk >/dev/null 2>&1; then
		echo "$target: wrk is absent: skipping the http scenario, running http_mixed alone"
		scenarios=http_mixed
	fi
fi
go build -o bin/jade ./cmd/jade || exit 1
args=(perf --scenarios "$scenarios" --reps "$reps")
[ -n "$json" ] && args+=(--json "$json")
exec bin/jade "${args[@]}"
