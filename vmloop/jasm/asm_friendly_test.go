package jasm

import (
	"testing"
)

// same asserts that two sources assemble to the same code, frames and
// pools: the friendly form and its documented lowering.
func same(t *testing.T, friendly, raw string) {
	t.Helper()
	p := mustAssemble(t, "friendly", friendly)
	q := mustAssemble(t, "raw", raw)
	if d := diffPrograms(p, q); d != "" {
		t.Errorf("%s\nfriendly:\n%s\nraw:\n%s", d, Disassemble(p), Disassemble(q))
	}
}

func TestFriendlyForms(t *testing.T) {
	cases := []struct{ name, friendly, raw string }{
		{"mov picks by type", `
.func f(a:i64, b:f64, c:ref) -> i64
  .local x:i64, y:f64, z:ref
  mov x, a
  mov y, b
  mov z, c
  mov r3, a      ; raw destination: the source's type decides
  ret x
.end`, `
.func f(a:i64, b:f64, c:ref) -> i64
  .local x:i64, y:f64, z:ref
  movi x, a
  movf y, b
  movr z, c
  movi r3, a
  ret x
.end`},
		{"const picks by literal and type", `
.func f() -> i64
  .local i:i64, g:f64, s:ref
  const i, 30
  const i, -2147483648
  const i, 2147483648
  const i, 0x7fffffffffffffff
  const g, 1.5
  const g, 3
  const g, inf
  const s, "hi"
  const r3, 7
  const r4, 2.5
  const r5, "x"
  ret i
.end`, `
.func f() -> i64
  .local i:i64, g:f64, s:ref
  .regs 6
  ldi i, 30
  ldi i, -2147483648
  ldk i, 2147483648
  ldk i, 0x7fffffffffffffff
  ldf g, 1.5
  ldf g, 3.0
  ldf g, inf
  lds s, "hi"
  ldi r3, 7
  ldf r4, 2.5
  lds r5, "x"
  ret i
.end`},
		{"call with moves and literal args", `
.func g(a:i64, b:f64) -> f64
  ret b
.end
.func f(x:i64) -> f64
  .local y:f64
  call y, g, x, 2
  call _, g, 7, y
  ret y
.end`, `
.func g(a:i64, b:f64) -> f64
  ret b
.end
.func f(x:i64) -> f64
  .local y:f64
  .regs 4
  movi r2, x
  ldf r3, 2.0
  call (r2, 2), g
  movf y, r2
  ldi r2, 7
  movf r3, y
  call (r2, 2), g
  ret y
.end`},
		{"call already a window", `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func f(x:i64, y:i64) -> i64
  call x, g, x, y
  ret x
.end`, `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func f(x:i64, y:i64) -> i64
  call (x, 2), g
  ret x
.end`},
		{"call with no arguments uses the hidden window", `
.func g() -> i64
  .local z:i64
  const z, 1
  ret z
.end
.func f() -> i64
  .local x:i64
  call x, g
  ret x
.end`, `
.func g() -> i64
  .local z:i64
  const z, 1
  ret z
.end
.func f() -> i64
  .local x:i64
  .regs 2
  call (r1, 0), g
  movi x, r1
  ret x
.end`},
		{"spawn and join", `
.func w(x:i64) -> f64
  .local y:f64
  itof y, x
  ret y
.end
.func f(n:i64) -> f64
  .local t:ref, v:f64
  spawn t, w, n
  join v, t
  join _, t
  ret v
.end`, `
.func w(x:i64) -> f64
  .local y:f64
  itof y, x
  ret y
.end
.func f(n:i64) -> f64
  .local t:ref, v:f64
  .regs 4
  movi r3, n
  spawn (r3, 1), w
  movr t, r3
  joinf v, t
  joinv t
  ret v
.end`},
		{"spawn with the handle as the window", `
.func w() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f() -> i64
  .local t:ref, v:i64
  spawn t, w
  join v, t
  ret v
.end`, `
.func w() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f() -> i64
  .local t:ref, v:i64
  spawn (t, 0), w
  joini v, t
  ret v
.end`},
		{"detached spawns", `
.func w(x:i64, ev:ref) -> i64
  ret x
.end
.func v() -> void
  retv
.end
.func f(n:i64, ev:ref) -> i64
  .local m:i64
  spawn _, w, n, ev    ; consecutive: the arguments are the window
  spawn _, w, 7, ev    ; a literal: the hidden window, no move back
  subi  m, n, 1
  spawn _, w, m, ev    ; not consecutive: the hidden window
  spawn _, v           ; no arguments: no window needed
  ret n
.end`, `
.func w(x:i64, ev:ref) -> i64
  ret x
.end
.func v() -> void
  retv
.end
.func f(n:i64, ev:ref) -> i64
  .local m:i64
  .regs 5
  spawn _, (n, 2), w
  ldi  r3, 7
  movr r4, ev
  spawn _, (r3, 2), w
  subi m, n, 1
  movi r3, m
  movr r4, ev
  spawn _, (r3, 2), w
  spawn _, (r0, 0), v
  ret n
.end`},
		{"spawn _ under an ABI before detached spawns", `
.abi 1.8
.func w(x:i64) -> i64
  ret x
.end
.func f(n:i64) -> i64
  spawn _, w, n        ; the handle lands in the hidden window
  ret n
.end`, `
.abi 1.8
.func w(x:i64) -> i64
  ret x
.end
.func f(n:i64) -> i64
  .regs 2
  movi r1, n
  spawn (r1, 1), w
  ret n
.end`},
		{"intr forms", `
.func f(s:ref, n:i64) -> i64
  .local id:i64
  intr _, io.print_str, s
  intr _, io.print_i64, 42
  intr id, task.id
  intr n, task.id
  intr _, host.log, s, n       ; unknown result: never the argument window
  intr r5, host.get, r5
  ret id
.end`, `
.func f(s:ref, n:i64) -> i64
  .local id:i64
  .regs 6
  intr (s, 1), io.print_str
  ldi r6, 42
  intr (r6, 1), io.print_i64
  intr (id, 0), task.id
  intr (n, 0), task.id
  movr r6, s
  movi r7, n
  intr (r6, 2), host.log
  intr (r5, 1), host.get
  ret id
.end`},
		{"intr of a host intrinsic with moves", `
.func f(s:ref, n:i64) -> i64
  .local k:i64
  intr k, host.len, s
  intr _, host.log, n, s
  ret k
.end`, `
.func f(s:ref, n:i64) -> i64
  .local k:i64
  .regs 5
  movr r3, s
  intr (r3, 1), host.len
  movi k, r3
  movi r3, n
  movr r4, s
  intr (r3, 2), host.log
  ret k
.end`},
		{"tailcall", `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func h() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f(x:i64, y:i64) -> i64
  jz x, swap
  jz y, none
  tailcall g, x, y
swap:
  tailcall g, y, x
none:
  tailcall h
.end`, `
.func g(a:i64, b:i64) -> i64
  ret a
.end
.func h() -> i64
  .local z:i64
  const z, 0
  ret z
.end
.func f(x:i64, y:i64) -> i64
  .regs 4
  jz x, swap
  jz y, none
  tailcall (x, 2), g
swap:
  movi r2, y
  movi r3, x
  tailcall (r2, 2), g
none:
  tailcall (r0, 0), h
.end`},
		{"ret without a value", `
.func f()
  ret
.end`, `
.func f() -> void
  retv
.end`},
		{"pool index syntax and directives", `
.kint 5, 5
.kstr "a"
.func f() -> i64
  .local i:i64, s:ref
  ldk i, #1
  ldk i, 5
  lds s, "a"
  lds s, "b"
  ret i
.end`, `
.kint 5
.kint 5
.kstr "a", "b"
.func f() -> i64
  .local i:i64, s:ref
  ldk i, #1
  ldk i, #0
  lds s, #0
  lds s, #1
  ret i
.end`},
		{"imports dedupe and quoted names", `
.func f(n:i64)
  intr _, io.print_i64, n
  intr _, io.print_i64, n
  intr _, "io.print_i64", n
  retv
.end`, `
.import io.print_i64
.func f(n:i64)
  intr (n, 1), #0
  intr (n, 1), io.print_i64
  intr (n, 1), io.print_i64
  retv
.end`},
		{"raw registers grow the frame", `
.func f(a:i64) -> i64
  movi r9, a
  ret r9
.end`, `
.func f(a:i64) -> i64
  .regs 10
  movi r9, a
  ret r9
.end`},
		{"labels on one line and at the end", `
.func f(a:i64) -> i64
top: again: jz a, top
  .try x, y, h, r1
x: subi a, a, 1
y: ret a
h: ret a
.end`, `
.func f(a:i64) -> i64
  .regs 2
  .try x, y, h, r1
top:
  jz a, top
x:
  subi a, a, 1
y:
  ret a
h:
  ret a
.end`},
		{"unnamed parameters and elem types", `
.func f(i64, ref) -> ref
  .local a:ref
  anew a, r0, ref
  anew a, r0, i64
  anew a, r0, f64
  ret a
.end`, `
.func f(i64, ref) -> ref
  .local a:ref
  anew a, r0, 3
  anew a, r0, 1
  anew a, r0, 2
  ret a
.end`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { same(t, c.friendly, c.raw) })
	}
}
