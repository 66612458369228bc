#!/bin/sh
# Runs loop.c alone under AddressSanitizer and UndefinedBehaviorSanitizer,
# with computed-goto and with switch dispatch, using clang when installed
# and gcc otherwise. Run from the repository root: sh native/sanitize/run.sh
set -e
CC=${CC:-$(command -v clang || command -v gcc)}
for mode in "" "-DJN_NO_GOTO"; do
	for opt in -O1 -O2; do
		echo "sanitize: $CC $opt $mode"
		$CC $opt $mode -g -Wall -Wextra -fsanitize=address,undefined -fno-sanitize-recover=all \
			-fno-omit-frame-pointer -I native native/loop.c native/sanitize/driver.c -lm -o /tmp/jn_sanitize
		/tmp/jn_sanitize
	done
done
