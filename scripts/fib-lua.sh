#!/usr/bin/env bash
# fib-lua.sh — fib(30) on C Lua 5.4 and LuaJIT's interpreter (-joff), next
# to `jade run examples/fib.jasm`, for the side-by-side figures in the
# README. Installs lua5.4/luajit/hyperfine from Debian when it can (root),
# and says clearly what is missing otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
want=(lua5.4 luajit hyperfine)
missing=()
for c in "${want[@]}"; do command -v "$c" >/dev/null || missing+=("$c"); done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1
fi
go build -o bin/jade ./cmd/jade || exit 1
lua=$(mktemp --suffix .lua)
trap 'rm -f "$lua"' EXIT
cat > "$lua" <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
print(fib(30))
LUA
cmds=("bin/jade run examples/fib.jasm")
command -v lua5.4 >/dev/null && cmds+=("lua5.4 $lua") || echo "fib-lua: lua5.4 not installed: skipping lua54"
command -v luajit >/dev/null && cmds+=("luajit -joff $lua") || echo "fib-lua: luajit not installed: skipping luajit"
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 2 --runs 10 "${cmds[@]}"
else
  echo "fib-lua: hyperfine not installed: timing with bash's time"
  for c in "${cmds[@]}"; do echo "== $c"; time $c; done
fi
