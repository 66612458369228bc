package jasm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each case has exactly one error; want is "line:col: message fragment".
var errorCases = []struct {
	name, src, want string
}{
	// lexical
	{"bad char", ".func f()\n  nop $\n.end", "2:7: unexpected character '$'"},
	{"unterminated string", ".func f()\n  .local s:ref\n  const s, \"abc\n  retv\n.end", "3:12: unterminated string literal"},
	{"bad escape", ".func f()\n  .local s:ref\n  const s, \"a\\qb\"\n  retv\n.end", "3:14: unknown escape \\q"},
	{"bad hex escape", ".func f()\n  .local s:ref\n  const s, \"\\x4\"\n  retv\n.end", "3:13: malformed \\x escape"},
	{"int too big", ".func f()\n  .local i:i64\n  const i, 9223372036854775808\n  retv\n.end", "3:12: integer literal 9223372036854775808 is above the i64 maximum"},
	{"bad int", ".func f()\n  .local i:i64\n  const i, 12ab\n  retv\n.end", "3:12: malformed integer literal \"12ab\""},
	{"float out of range", ".func f()\n  .local g:f64\n  const g, 1e999\n  retv\n.end", "3:12: float literal 1e999 is out of the range of f64"},
	{"bad pool index", ".func f()\n  .local i:i64\n  ldk i, #x\n  retv\n.end", "3:10: malformed pool index \"#x\""},
	{"non-ascii", ".func f()\n  nop é\n.end", "2:7: unexpected non-ASCII character"},

	// structure
	{"missing end", ".func f()\n  retv\n", "1:1: function f has no .end"},
	{"missing end before func", ".func f()\n  retv\n.func g()\n  retv\n.end", "1:1: function f has no .end: add .end before the .func at line 3"},
	{"end without func", ".end", "1:1: .end without a matching .func"},
	{"instruction outside", "nop", "1:1: instruction nop outside a function"},
	{"label outside", "x:\n.func f()\n  retv\n.end", "1:1: label x outside a function"},
	{"local outside", ".local a:i64", "1:1: .local outside a function"},
	{"abi inside", ".func f()\n  .abi 1.0\n  retv\n.end", "2:3: .abi inside function f"},
	{"duplicate abi", ".abi 1.0\n.abi 1.0", "2:1: duplicate .abi (first at line 1)"},
	{"bad abi", ".abi 1", "1:6: malformed ABI version 1"},
	{"unknown directive", ".fucn f()", "1:1: unknown directive .fucn (did you mean .func?)"},
	{"func without parens", ".func f\n  retv\n.end", "1:8: expected '(' after the function name"},
	{"bad result type", ".func f() -> int\n  retv\n.end", "1:14: unknown result type int"},
	{"param without type", ".func f(a)\n  retv\n.end", "1:9: a needs a type"},
	{"bad local type", ".func f()\n  .local a:int\n  retv\n.end", "2:12: unknown register type int"},
	{"reserved register name", ".func f()\n  .local r3:i64\n  retv\n.end", "2:10: register name r3 is reserved"},
	{"reserved label", ".func f()\n_:\n  retv\n.end", "2:1: label name _ is reserved"},
	{"dotted function name", ".func a.b()\n  retv\n.end", "1:7: function name a.b must not contain '.'"},
	{"duplicate function", ".func f()\n  retv\n.end\n.func f()\n  retv\n.end", "4:7: duplicate function f (first defined at e.jasm:1:7)"},
	{"duplicate register", ".func f(a:i64)\n  .local b:i64, a:f64\n  retv\n.end", "2:17: duplicate register a (already declared as parameter r0)"},
	{"duplicate label", ".func f()\nx:\nx:\n  retv\n.end", "3:1: duplicate label x (first defined at line 2)"},
	{"missing comma", ".func f(a:i64) -> i64\n  add a, a a\n  ret a\n.end", "2:12: expected ',' between operands of add, got name a"},
	{"trailing comma", ".func f(a:i64) -> i64\n  add a, a,\n  ret a\n.end", "2:12: missing operand after ','"},
	{"bad window", ".func f(a:i64) -> i64\n  call (a), f\n  ret a\n.end", "2:8: malformed window"},
	{"too many frames", ".func f()\n  .regs 300\n  retv\n.end", "2:3: .regs takes the frame size"},

	// instructions
	{"unknown mnemonic", ".func f()\n  retn\n.end", "2:3: unknown mnemonic retn (did you mean ret?)"},
	{"operand count", ".func f(a:i64) -> i64\n  add a, a\n  ret a\n.end", "2:3: add takes 3 operand(s), got 2: add dst:i64, src:i64, src:i64"},
	{"too many operands", ".func f(a:i64) -> i64\n  neg a, a, a\n  ret a\n.end", "2:13: neg takes 2 operand(s), got 3"},
	{"type mismatch", ".func f(a:i64, b:f64) -> i64\n  add a, a, b\n  ret a\n.end", "2:13: add: operand 3 must be i64, but b is declared f64"},
	{"ret type", ".func f(b:f64) -> i64\n  ret b\n.end", "2:7: ret: operand 1 must be i64, but b is declared f64"},
	{"ret in void", ".func f(a:i64)\n  ret a\n.end", "2:3: ret: function f returns void"},
	{"ret without value", ".func f() -> i64\n  ret\n.end", "2:3: ret: function f returns i64, so ret needs a value"},
	{"retv in non-void", ".func f(a:i64) -> i64\n  retv\n.end", "2:3: retv: function f returns i64; use ret x"},
	{"unknown register", ".func f(count:i64) -> i64\n  addi count, cuont, 1\n  ret count\n.end", "2:15: addi: unknown register cuont (did you mean count?)"},
	{"undeclared register", ".func f() -> i64\n  ret zz\n.end", "2:7: ret: unknown register zz (declare it with .local zz:i64"},
	{"raw register out of range", ".func f()\n  cancel r256\n  retv\n.end", "2:10: register r256 out of range"},
	{"literal for register", ".func f(a:i64) -> i64\n  add a, a, 5\n  ret a\n.end", "2:13: add: expected a register, got integer 5 (for an immediate operand use addi)"},
	{"discard misuse", ".func f(a:i64) -> i64\n  add _, a, a\n  ret a\n.end", "2:7: add: _ discards a result"},
	{"imm16 range", ".func f(a:i64) -> i64\n  jlti a, 40000, x\nx:\n  ret a\n.end", "2:11: jlti: immediate 40000 does not fit in 16 bits (-32768..32767); load it into a register with const and use jlt"},
	{"imm32 range", ".func f(a:i64) -> i64\n  addi a, a, 3000000000\n  ret a\n.end", "2:14: addi: immediate 3000000000 does not fit in 32 bits (-2147483648..2147483647); load it into a register with const and use add"},
	{"ldi range", ".func f(a:i64) -> i64\n  ldi a, 3000000000\n  ret a\n.end", "2:10: ldi: immediate 3000000000 does not fit in 32 bits (-2147483648..2147483647); use ldk"},
	{"undefined label", ".func f(a:i64) -> i64\n  jz a, dnoe\ndone:\n  ret a\n.end", "2:9: undefined label dnoe (did you mean done?)"},
	{"label not ident", ".func f(a:i64) -> i64\n  jz a, 5\n  ret a\n.end", "2:9: jz: expected a label, got integer 5"},
	{"unknown function", ".func fib(a:i64) -> i64\n  call a, fbi, a\n  ret a\n.end", "2:11: unknown function fbi (did you mean fib?)"},
	{"arg count", ".func f(a:i64) -> i64\n  call a, f, a, a\n  ret a\n.end", "2:11: call: f takes 1 argument(s), got 2"},
	{"arg type", ".func f(a:i64) -> i64\n  .local g:f64\n  call a, f, g\n  ret a\n.end", "3:14: call: argument 1 of f must be i64, but g is declared f64"},
	{"literal arg type", ".func f(a:i64) -> i64\n  call a, f, \"s\"\n  ret a\n.end", "2:14: call: argument 1 of f must be i64, got a string literal"},
	{"result type", ".func f(a:i64) -> i64\n  .local g:f64\n  call g, f, a\n  ret a\n.end", "3:8: call: the destination of f must be i64, but g is declared f64"},
	{"void result", ".func v()\n  retv\n.end\n.func f(a:i64) -> i64\n  call a, v\n  ret a\n.end", "5:8: call: v returns nothing; write _ as the destination"},
	{"spawn dst", ".func w()\n  retv\n.end\n.func f(a:i64) -> i64\n  spawn a, w\n  ret a\n.end", "5:9: spawn: the task handle destination must be ref, but a is declared i64"},
	{"tailcall result", ".func v()\n  retv\n.end\n.func f(a:i64) -> i64\n  tailcall v\n.end", "5:12: tailcall: v returns void but f returns i64"},
	{"intr name", ".func f(a:i64)\n  intr _, print, a\n  retv\n.end", "2:11: malformed intrinsic name print"},
	{"intr builtin only", ".func f(a:i64)\n  intr _, task.spawn, a\n  retv\n.end", "2:11: task.spawn cannot be called through intr; use its builtin instruction spawn"},
	{"intr arg count", ".func f(a:i64)\n  intr _, io.print_i64, a, a\n  retv\n.end", "2:11: intr: io.print_i64 takes 1 argument(s), got 2"},
	{"intr void dst", ".func f(a:i64)\n  intr a, io.print_i64, a\n  retv\n.end", "2:8: intr: io.print_i64 returns nothing; write _ as the destination"},
	{"intr unknown raw", ".func f()\n  intr _, host.x, r3\n  retv\n.end", "2:19: intr: cannot tell the type of r3"},
	{"intr unknown result", ".func f(a:i64)\n  intr r5, host.x, a\n  retv\n.end", "2:8: intr: cannot tell the result type of host.x"},
	{"call callee missing", ".func f(a:i64)\n  call a\n  retv\n.end", "2:3: call takes a destination and a callee"},
	{"window count", ".func f(a:i64) -> i64\n  call (a, 300), f\n  ret a\n.end", "2:12: call: argument count 300 out of range"},
	{"mov types", ".func f(a:i64, b:f64) -> i64\n  mov a, b\n  ret a\n.end", "2:10: mov: a is i64 but b is f64 (convert with ftoi)"},
	{"mov raw", ".func f() -> i64\n  mov r1, r2\n  ret r1\n.end", "2:3: mov: cannot tell the type of r1 and r2"},
	{"mov literal", ".func f(a:i64) -> i64\n  mov a, 5\n  ret a\n.end", "2:10: mov copies a register; to load the literal 5 use const a, 5"},
	{"const type", ".func f(a:i64) -> i64\n  const a, 1.5\n  ret a\n.end", "2:12: const: a is i64 but 1.5 is a float literal"},
	{"const ref", ".func f(s:ref) -> ref\n  const s, 5\n  ret s\n.end", "2:12: const: s is ref; only string literals can be loaded"},
	{"const index", ".func f(a:i64) -> i64\n  const a, #0\n  ret a\n.end", "2:12: const takes a literal; to name a pool entry use ldk, ldf or lds with #0"},
	{"const inexact", ".func f(g:f64) -> f64\n  const g, 9007199254740993\n  ret g\n.end", "2:12: const: integer 9007199254740993 has no exact f64 value"},
	{"join raw", ".func f(t:ref)\n  join r3, t\n  retv\n.end", "2:8: join: cannot tell the type of r3"},
	{"join task type", ".func f(t:i64) -> i64\n  join t, t\n  ret t\n.end", "2:11: join: the task must be ref, but t is declared i64"},
	{"pool index range", ".func f(a:i64) -> i64\n  ldk a, #3\n  ret a\n.end", "2:10: index #3 is out of range: the i64 pool has 0 entries"},
	{"elem type", ".func f(a:i64) -> ref\n  .local x:ref\n  anew x, a, int\n  ret x\n.end", "3:14: anew: expected an element type (i64, f64 or ref), got int"},
	{"pool directive in func", ".func f()\n  .kint 5\n  retv\n.end", "2:3: .kint inside function f"},
	{"kstr type", ".kstr 5", "1:7: .kstr takes string literals, got integer 5"},
	{"word operand", ".func f()\n  .word x\n.end", "2:3: .word takes one integer"},

	// .try
	{"try count", ".func f()\n  .try a, b, c\n  retv\n.end", "2:3: .try takes 4 operands"},
	{"try reg type", ".func f(a:i64)\n  .try s, e, h, a\ns: nop\ne: retv\nh: retv\n.end", "2:17: .try: the handler register receives an error handle, so it must be ref; a is i64"},
	{"try empty", ".func f(x:ref)\n  .try s, s, h, x\ns: retv\nh: retv\n.end", "2:8: .try: empty range"},
	{"try handler inside", ".func f(x:ref)\n  .try s, e, s, x\ns: nop\ne: retv\n.end", "2:14: .try: handler s lies inside its own range s..e"},
	{"try handler at end", ".func f(x:ref)\n  .try s, e, h, x\ns: retv\ne:\nh:\n.end", "2:14: .try: handler h is at the end of the function"},
	{"try order", ".func f(x:ref)\n  .try a, d, h, x\n  .try b, c, h, x\na: nop\nb: nop\nc: nop\nd: nop\nh: retv\n.end", "3:3: .try: this range lies inside the range listed at line 2; list the inner range first"},
	{"try overlap", ".func f(x:ref)\n  .try a, c, h, x\n  .try b, d, h, x\na: nop\nb: nop\nc: nop\nd: nop\nh: retv\n.end", "3:3: .try: this range overlaps the range at line 2 without nesting"},
	{"try undefined label", ".func f(x:ref)\n  .try a, b, h, x\na: nop\nb: retv\n.end", "2:14: undefined label h"},
}

func TestErrors(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Assemble("e.jasm", []byte(c.src))
			require.Error(t, err, "no error; disassembly:\n%s", Disassemble(p))
			if p != nil {
				t.Errorf("non-nil program with an error")
			}
			var l ErrorList
			if !errors.As(err, &l) {
				t.Fatalf("error %T is not an ErrorList", err)
			}
			if len(l) != 1 {
				t.Errorf("want 1 error, got %d:\n%v", len(l), err)
			}
			got := fmt.Sprintf("%d:%d: %s", l[0].Line, l[0].Col, l[0].Msg)
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got  %s\nwant %s...", got, c.want)
			}
			if !strings.HasPrefix(l[0].Error(), "e.jasm:") {
				t.Errorf("Error() = %q", l[0].Error())
			}
		})
	}
}
