#!/usr/bin/env bash
# Runs the windows/amd64 test binaries of every package under Wine, and
# jade.exe on the examples (TestExamples with JADE_BIN set), on Linux,
# built with cgo through MinGW so that the cgo loop runs too:
#
#   scripts/windows/run.sh [-ci]
#
# Installs wine64 and gcc-mingw-w64-x86-64 with apt-get when they are
# missing and it can (root or password-less sudo); otherwise it says so and
# exits 0 having run nothing. Debian's Wine 8 lacks bcryptprimitives.dll,
# whose ProcessPrng every Go program since Go 1.22 needs before main, so
# the script builds that DLL from processprng.c beside it into a private
# Wine prefix, $JADE_WINEPREFIX or ~/.cache/jade/wine (kept across clones,
# so a CI run on the same machine does not initialise it again),
# initialised on first use; the user's own ~/.wine is never touched.
#
# -ci runs the subset meant for CI: the IOCP backend's tests and the
# examples (50 concurrent echo clients, RESP, jade.exe on every example),
# which is where Windows differs. Without it every package whose tests
# build for windows runs.
set -uo pipefail
cd "$(dirname "$0")/../.."
target=windows
cache=build/cache
exe=.exe
# shellcheck source=../platforms/lib.sh
. scripts/platforms/lib.sh

ci=false
[ "${1:-}" = -ci ] && ci=true

wine=$(command -v wine64 || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; })
if [ -z "$wine" ] || ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
	install_pkgs wine64 gcc-mingw-w64-x86-64 || { echo "$target: skipped: Wine or MinGW is missing and cannot be installed"; exit 0; }
	wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
fi
"$wine" --version >/dev/null 2>&1 || { echo "$target: skipped: $wine does not run"; exit 0; }

export WINEPREFIX=${JADE_WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/jade/wine} WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
dll=$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll
if [ ! -d "$WINEPREFIX/drive_c/windows/system32" ]; then
	echo "$target: creating the Wine prefix $WINEPREFIX"
	mkdir -p "$WINEPREFIX"
	"$wine" wineboot --init >"$cache/wineboot.log" 2>&1 || { echo "$target: wineboot failed (see $cache/wineboot.log)"; exit 1; }
fi
if [ ! -f "$dll" ] || [ scripts/windows/processprng.c -nt "$dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -Wall -o "$dll" scripts/windows/processprng.c -ladvapi32 || exit 1
fi

# Under Wine 8, Go's os.RemoveAll fails on any directory that is not empty
# ("unlinkat …: Invalid function"; scripts/windows/removeall shows it with
# Go's os package alone), so every t.TempDir cleanup would fail: Go's
# Windows unlinkat sets FileDispositionInformationEx, Wine answers
# STATUS_NOT_IMPLEMENTED, and Go falls back to the older call only for the
# statuses a real Windows gives. The test binaries are built with an
# overlay of that one file of the installed Go that takes Wine's status as
# "unsupported" too (the binaries' code is otherwise untouched).
goflags=${GOFLAGS:-}
at=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
ov=$PWD/$cache/overlay
mkdir -p "$ov"
if [ -f "$at" ] && sed 's|^\tcase STATUS_INVALID_INFO_CLASS, // the operating system|\tcase NTStatus(0xC0000002): // STATUS_NOT_IMPLEMENTED (Wine)\n\t\treturn deleteatFallback(h)\n&|' \
	"$at" >"$ov/at_windows.go" && grep -q 'STATUS_NOT_IMPLEMENTED (Wine)' "$ov/at_windows.go"; then
	printf '{"Replace":{"%s":"%s"}}\n' "$at" "$ov/at_windows.go" >"$ov/overlay.json"
	goflags="$goflags -overlay=$ov/overlay.json"
else
	echo "$target: this Go's unlinkat is not the one the Wine overlay knows: t.TempDir cleanups may fail under Wine"
fi

bins=$cache/windows
t0=$(date +%s)
if $ci; then
	pkgs="./iocp ./examples"
else
	pkgs=$(go list ./...)
fi
# shellcheck disable=SC2086
# With cgo through MinGW, so the cgo loop (native/loop.c) runs on Windows
# too, built by the compiler a Windows user's cgo would use.
(
	export GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc
	# shellcheck disable=SC2086
	GOFLAGS=$goflags build_tests "$bins" $pkgs && go build -o "$bins/jade.exe" ./cmd/jade
) || exit 1
echo "$target: built in $(($(date +%s) - t0))s; running under $("$wine" --version)"

# TestExamples runs this jade.exe instead of building one with go, which
# the Windows side does not have. Wine maps / to drive Z:.
abs=$PWD/$bins/jade.exe
export JADE_BIN="Z:${abs//\//\\}"
# Debian's wineserver wrapper starts the server with -p0: it exits as the
# last Wine process ends, and a test binary started in that moment loses
# its connection before it runs a test ("wine client error:0: recvmsg:
# Connection reset by peer"). One persistent server serves the whole run
# and is stopped at its end.
ws=$(dirname "$wine")/wineserver64
[ -x "$ws" ] || ws=$(command -v wineserver || true)
if [ -n "$ws" ] && "$ws" -p; then
	trap '"$ws" -k >/dev/null 2>&1 || true' EXIT
fi
run_tests "$bins" 300 "$wine"
