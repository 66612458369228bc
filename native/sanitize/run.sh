#!/bin/sh
# Runs loop.c alone under AddressSanitizer and UndefinedBehaviorSanitizer,
# with computed-goto and with switch dispatch, at -O1 and -O2, with clang
# and with gcc (each that is installed; $CC alone when set). When clang is
# missing it is installed from the distribution (apt-get, as root or with
# password-less sudo) if possible; otherwise the run says so and uses gcc.
# Run from the repository root: sh native/sanitize/run.sh
set -e
if [ -z "${CC:-}" ] && ! command -v clang >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo=none; fi
	fi
	if [ "$sudo" != none ]; then
		echo "sanitize: installing clang with apt-get"
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null 2>&1 ||
			{ $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
				$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null 2>&1; } ||
			echo "sanitize: apt-get install clang failed"
	fi
fi
if [ -n "${CC:-}" ]; then
	ccs=$CC
else
	ccs=""
	for c in clang gcc; do
		if command -v $c >/dev/null 2>&1; then ccs="$ccs $c"; fi
	done
	case $ccs in *clang*) ;; *) echo "sanitize: clang is not installed (and could not be): gcc only" ;; esac
fi
for cc in $ccs; do
	for mode in "" "-DJN_NO_GOTO"; do
		for opt in -O1 -O2; do
			echo "sanitize: $cc $opt $mode"
			$cc $opt $mode -g -Wall -Wextra -fsanitize=address,undefined -fno-sanitize-recover=all \
				-fno-omit-frame-pointer -I native native/loop.c native/sanitize/driver.c -lm -o /tmp/jn_sanitize
			/tmp/jn_sanitize
		done
	done
done
