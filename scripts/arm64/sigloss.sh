#!/usr/bin/env bash
# Shows that qemu-user, not jade, loses signals: the same linux/amd64 jade
# (built for this machine) is sent SIGUSR1 and then SIGINT while it waits
# forever, N times
# natively and N times under qemu-x86_64-static (the same emulator as
# qemu-aarch64, translating to the same host), and the runs that were
# still alive 2 s later are counted. Natively every SIGINT cancels main
# (exit 3); under qemu-user some are lost. Why the signal tests of
# cmd/jade skip under qemu (JADE_EMULATOR=qemu-user, set by run.sh).
#
#   scripts/arm64/sigloss.sh [N]   (default 10)
set -uo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10}
qemu=$(command -v qemu-x86_64-static || command -v qemu-x86_64) || { echo "sigloss: no qemu-x86_64"; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/jade" ./cmd/jade || exit 2
printf '.func main() -> i64\n .local ev:ref, z:i64\n evnew ev\n evwait ev\n const z, 0\n ret z\n.end\n' >"$dir/w.jasm"
lost() { # lost RUNNER...: how many of n SIGINTs left the process alive
	local k=0 i pid
	for i in $(seq "$n"); do
		"$@" "$dir/jade" run "$dir/w.jasm" >/dev/null 2>&1 &
		pid=$!
		sleep 1.5
		kill -USR1 $pid # a task dump, as TestDebugAddrAndDump asks first
		sleep 0.05
		kill -INT $pid
		sleep 2
		if kill -0 $pid 2>/dev/null; then
			k=$((k + 1))
			kill -9 $pid
		fi
		wait $pid 2>/dev/null
	done
	echo $k
}
native=$(lost env)
emulated=$(lost "$qemu")
echo "sigloss: SIGINT lost natively $native of $n, under $(basename "$qemu") $emulated of $n"
[ "$native" = 0 ] && [ "$emulated" != 0 ]
