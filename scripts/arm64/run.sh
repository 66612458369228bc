#!/usr/bin/env bash
# Runs the linux/arm64 test binaries of every package under qemu-user
# (qemu-aarch64-static) on an x86-64 Linux machine:
#
#   scripts/arm64/run.sh [-ci]
#
# arm64 is weakly ordered where x86-64 is not, so the scheduler's lock-free
# paths (run queues, wait words, the task-record reuse) meet reorderings
# there that an amd64 run never shows. qemu-user runs plain accesses on the
# host's stronger model, so a missing barrier between them does not show;
# and it does not keep a store-release before a later load-acquire (Go's
# atomic Store, then Load), which arm64 does (sblitmus below measures it).
# So this run proves the arm64 code generation, the epoll fallback (qemu
# has no io_uring and no epoll_pwait2) and the tests' logic, not the
# absence of every ordering bug (that needs arm64 hardware).
#
# Installs qemu-user-static and gcc-aarch64-linux-gnu with apt-get when
# they are missing and it can (root or password-less sudo); without qemu
# it says so and exits 0 having run nothing, without the cross compiler it
# builds with CGO_ENABLED=0 and says the cgo loop (native/loop.c) was not
# run. With it every package is built with cgo, so vmloop and the packages
# above it run on the C loop as they do on amd64, plus the Go loop's own
# tests.
#
# The race detector is tried on a probe first: Go's ThreadSanitizer on
# linux/arm64 needs a 48-bit address space, and qemu-user on an x86-64
# host gives the guest less ("FATAL: ThreadSanitizer: unsupported VMA
# range"), so -race runs only where the probe passes.
#
# qemu-user has no io_uring (io_uring_setup is ENOSYS): the uring-forced
# tests skip with that reason (internal/feature; JADE_REQUIRE, which CI
# sets to io_uring on its own kernel, is unset here) and the auto poller
# falls back to epoll, which is what runs.
#
# -ci runs the subset meant for CI: sched (the race and hammer tests among
# them, -short), vmloop and the release-store packages (relstore's
# litmus test, tinylock, asymfence), without the -race probe.
set -uo pipefail
cd "$(dirname "$0")/../.."
target=arm64
cache=build/cache
exe=
# shellcheck source=../platforms/lib.sh
. scripts/platforms/lib.sh

ci=false
[ "${1:-}" = -ci ] && ci=true

qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
if [ -z "$qemu" ] || ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
	install_pkgs qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross ||
		install_pkgs qemu-user-static || true
	qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
fi
[ -n "$qemu" ] || { echo "$target: skipped: qemu-user is missing and cannot be installed"; exit 0; }
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
unset JADE_REQUIRE
export JADE_EMULATOR=qemu-user # the signal tests skip (internal/feature, sigloss.sh)

# The cross-build environment, for the builds only: a test that runs the go
# command (the soak's driver) builds for this machine, as it should.
cross=(GOOS=linux GOARCH=arm64)
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
	cross+=(CGO_ENABLED=1 CC=aarch64-linux-gnu-gcc)
	echo "$target: cgo with aarch64-linux-gnu-gcc: the cgo loop runs"
else
	cross+=(CGO_ENABLED=0)
	echo "$target: no aarch64-linux-gnu-gcc: CGO_ENABLED=0, the cgo loop (native/loop.c) is not run"
fi

bins=$cache/arm64
t0=$(date +%s)
if $ci; then
	pkgs="./sched ./vmloop ./internal/relstore ./internal/tinylock ./internal/asymfence"
	TESTFLAGS="-test.short ${TESTFLAGS:-}"
else
	pkgs=$(go list ./...)
fi
# shellcheck disable=SC2086
(export "${cross[@]}" && build_tests "$bins" $pkgs && go build -o "$bins/jade" ./cmd/jade) || exit 1
echo "$target: built in $(($(date +%s) - t0))s; running under $("$qemu" --version | head -1)"

# Tests that run the jade command get the arm64 one through qemu (the go
# command would build one for this machine, and nothing here runs arm64
# binaries by itself).
printf '#!/bin/sh\nexec %s %s "$@"\n' "$qemu" "$PWD/$bins/jade" >"$bins/jade-qemu"
chmod +x "$bins/jade-qemu"
export JADE_BIN=$PWD/$bins/jade-qemu

rc=0
# The CI subset's two packages run side by side (each takes about 80 s
# alone, most of it in one thread).
jobs=1
$ci && jobs=2
JOBS=$jobs TESTFLAGS=${TESTFLAGS:-} run_tests "$bins" 600 "$qemu" || rc=1

# How far qemu's memory model is from arm64's: a store-release followed by
# a load-acquire (Go's atomic Store, then Load) is ordered on arm64 but not
# under qemu-user on x86-64 (sblitmus's doc); a non-zero count says this
# run was weaker than arm64 hardware there. Informational: it does not
# fail the run, and it is not run in the CI subset (about 30 s).
if ! $ci && (export "${cross[@]}" CGO_ENABLED=0 && go build -o "$bins/sblitmus" ./scripts/arm64/sblitmus); then
	echo "$target: $("$qemu" "$bins/sblitmus" -n 1000000)"
fi

mkdir -p "$bins/race"
probe=$PWD/$bins/race/probe.test
if $ci; then
	echo "$target: -race not tried in the CI subset (make arm64 tries it; qemu-user on x86-64 cannot run it)"
elif ! out=$(env "${cross[@]}" go test -race -c -o "$probe" ./internal/syncbuf 2>&1); then
	echo "$target: no -race: the race build failed: $(echo "$out" | head -1)"
elif ! out=$(cd internal/syncbuf && "$qemu" "$probe" -test.run '^$' 2>&1); then
	echo "$target: no -race under qemu-user: $(echo "$out" | head -2 | tr '\n' ' ')"
else
	echo "$target: the race detector runs under qemu: -race on sched"
	(export "${cross[@]}" && build_tests "$bins/race" ./sched) || exit 1
	TESTFLAGS="-test.short ${TESTFLAGS:-}" run_tests "$bins/race" 600 "$qemu" || rc=1
fi
exit $rc
