# Shared by scripts/windows/run.sh and scripts/arm64/run.sh (sourced, bash):
# installing Debian packages when possible, building every package's test
# binary for another GOOS/GOARCH, and running the binaries under an
# emulator with a summary. Callers set: target (the name printed in every
# line), cache (a directory under build/cache).

# install_pkgs PKG...: apt-get install, as root or with password-less sudo.
# Returns 1, having said why, when that is impossible or fails.
install_pkgs() {
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "$target: cannot install $*: no apt-get on this machine"
		return 1
	fi
	local sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			sudo="sudo -n"
		else
			echo "$target: cannot install $*: not root and no password-less sudo"
			return 1
		fi
	fi
	echo "$target: installing $* with apt-get"
	local log="$cache/apt.log"
	mkdir -p "$cache"
	if $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1; then
		return 0
	fi
	if $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$log" 2>&1 &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$log" 2>&1; then
		return 0
	fi
	echo "$target: apt-get install $* failed (see $log)"
	return 1
}

# build_tests DIR PKG...: go test -c of each package (patterns as go list
# takes them) into DIR/NAME.test
# (NAME: the import path below the module, / as _; "root" for the module
# itself), in the environment of the caller (GOOS, GOARCH, CGO_ENABLED,
# CC). Packages without test files produce no binary.
build_tests() {
	local dir=$1 mod p name
	shift
	mkdir -p "$dir"
	rm -f "$dir"/*.test "$dir"/*.test.exe
	mod=$(go list -m)
	for p in $(go list "$@"); do
		name=${p#"$mod"}
		name=${name#/}
		name=${name//\//_}
		name=${name:-root}
		go test -c -o "$dir/$name.test$exe" "$p" || return 1
	done
}

# run_tests DIR TIMEOUT RUNNER...: runs every DIR/*.test binary built by
# build_tests in its package's directory with RUNNER in front (wine64,
# qemu-aarch64) and $TESTFLAGS after -test.v, each bounded by TIMEOUT
# seconds, up to $JOBS of them at once (default 1); prints one line per
# package and a total, in name order, and returns 1 if any failed. Logs
# stay in DIR/NAME.log.
run_tests() {
	local dir limit=$2 f name pkgdir rc pass fail skip
	dir=$(cd "$1" && pwd) || return 1
	shift 2
	local tp=0 tf=0 ts=0 bad="" running=0
	for f in "$dir"/*.test"$exe"; do
		[ -e "$f" ] || continue
		if [ "$running" -ge "${JOBS:-1}" ]; then
			wait -n
			running=$((running - 1))
		fi
		run_one "$f" "$limit" "$@" &
		running=$((running + 1))
	done
	wait
	for f in "$dir"/*.test"$exe"; do
		[ -e "$f" ] || continue
		name=$(basename "$f" ".test$exe")
		pkgdir=${name//_//}
		[ "$name" = root ] && pkgdir=.
		read -r rc secs <"$dir/$name.rc"
		pass=$(grep -c '^--- PASS' "$dir/$name.log")
		fail=$(grep -c '^--- FAIL' "$dir/$name.log")
		skip=$(grep -c '^--- SKIP' "$dir/$name.log")
		if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
			fail=1 # a crash, a timeout or a failing TestMain
		fi
		tp=$((tp + pass)) tf=$((tf + fail)) ts=$((ts + skip))
		printf '%s: %-24s %s  %3d passed %2d failed %2d skipped  %4ds\n' "$target" "$pkgdir" \
			"$([ "$rc" = 0 ] && echo ok || echo FAIL)" "$pass" "$fail" "$skip" "$secs"
		if [ "$rc" != 0 ]; then
			bad="$bad $pkgdir"
			{ grep -E -A12 '^(--- FAIL|panic:|fatal error:)' "$dir/$name.log" || tail -20 "$dir/$name.log"; } |
				head -60 | sed "s/^/$target:   /"
		fi
	done
	echo "$target: $tp passed, $tf failed, $ts skipped"
	if [ -n "$bad" ]; then
		echo "$target: failed:$bad (logs in $dir)"
		return 1
	fi
}

# run_one BINARY TIMEOUT RUNNER...: runs one test binary for run_tests,
# writing its output to NAME.log and "status seconds" to NAME.rc beside it.
run_one() {
	local f=$1 limit=$2 name pkgdir rc t0
	shift 2
	name=$(basename "$f" ".test$exe")
	pkgdir=${name//_//}
	[ "$name" = root ] && pkgdir=.
	t0=$(date +%s)
	# shellcheck disable=SC2086
	(cd "$pkgdir" && timeout -k 10 "$limit" "$@" "$f" -test.v -test.timeout "$((limit - 5))s" ${TESTFLAGS:-}) >"${f%.test"$exe"}.log" 2>&1
	rc=$?
	echo "$rc $(($(date +%s) - t0))" >"${f%.test"$exe"}.rc"
}
