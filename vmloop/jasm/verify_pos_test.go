package jasm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestVerifyErrorsHavePositions: every verifier rejection of an assembled
// program names the source file and line (from Program.File and
// Function.Lines), and a register by its declared name as well as its
// number. The ABI, import, .word and fall-off-the-end rejections gave no
// file:line before, and register reads said only "r0".
func TestVerifyErrorsHavePositions(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"abi too new", `; a comment
.abi 999.0
.func main()
  retv
.end`, `vmloop: verify: t.jasm:2: abi: program needs intrinsic ABI 999.0 but this VM implements ` + vmloop.ABI.String()},
		{"unknown intrinsic", `.func main()
  .local x:i64
  const x, 1
  intr _, host.nothere, x
  retv
.end`, `vmloop: verify: t.jasm:4: main@2: import 0 "host.nothere": unknown intrinsic`},
		{"intrinsic newer than the abi", `.abi 1.0
.func main()
  .local x:i64
  intr x, time.now
  retv
.end`, `vmloop: verify: t.jasm:4: main@0: import 0 "time.now" needs intrinsic ABI 1.1 but the program declares .abi 1.0`},
		{"undefined opcode", `.func main()
  retv
.end
.func other()
  .word 0xff
  retv
.end`, `vmloop: verify: t.jasm:5: other@0: undefined opcode 255`},
		{"falls off the end", `.func main() -> i64
  .local a:i64, b:i64
  const a, 1
  add b, a, a
.end`, `vmloop: verify: t.jasm:4: main@1: execution falls off the end of the function after add`},
		{"register name", `.func main() -> i64
  .local a:i64, b:i64
  const a, 1
  add a, a, b
  ret a
.end`, `vmloop: verify: t.jasm:4: main@1: add: r1 (b) is read as i64 before it is written`},
		{"call argument name", `.func main() -> i64
  .local n:i64, r:i64
  call r, f, n
  ret r
.end
.func f(x:i64) -> i64
  ret x
.end`, `vmloop: verify: t.jasm:3: main@0: movi: r0 (n) is read as i64 before it is written`},
		{"unused unknown import", `.func main()
  retv
.end
.import io.print_i64, host.nothere
`, `vmloop: verify: t.jasm:4:23: import 1 "host.nothere": unknown intrinsic`},
		{"unused import newer than the abi", `.abi 1.0
.import "time.now"
.func main()
  retv
.end`, `vmloop: verify: t.jasm:2:9: import 0 "time.now" needs intrinsic ABI 1.1 but the program declares .abi 1.0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Assemble("t.jasm", []byte(c.src))
			require.NoError(t, err)
			err = vmloop.Verify(p, nil)
			require.Error(t, err)
			require.ErrorContains(t, err, c.want)
			var ve *vmloop.VerifyError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "t.jasm", ve.File)
			require.Positive(t, ve.Line)
		})
	}
}

// TestUnusedImportPositionSurvivesBinary: the position of an .import
// entry travels through the binary form, so a .jbc with an unknown import
// that no instruction uses is rejected at that entry too.
func TestUnusedImportPositionSurvivesBinary(t *testing.T) {
	p, err := Assemble("t.jasm", []byte(".func main()\n  retv\n.end\n\n  .import host.nothere\n"))
	require.NoError(t, err)
	require.Equal(t, []vmloop.Import{{Name: "host.nothere", Line: 5, Col: 11}}, p.Intrinsics)
	data, err := p.MarshalBinary()
	require.NoError(t, err)
	q, err := vmloop.UnmarshalProgram(data)
	require.NoError(t, err)
	require.ErrorContains(t, vmloop.Verify(q, nil), `vmloop: verify: t.jasm:5:11: import 0 "host.nothere": unknown intrinsic`)
}

// TestVerifyErrorsWithoutDebugInfo: a program without debug information
// (hand-built, or stripped) keeps the function@pc form; a file name with a
// newline cannot split the message.
func TestVerifyErrorsWithoutDebugInfo(t *testing.T) {
	p := &vmloop.Program{ABI: vmloop.ABI, Funcs: []vmloop.Function{{Name: "main", NRegs: 1,
		Code: []vmloop.Instr{vmloop.Encode(vmloop.ADD, 0, 0, 0, 0), vmloop.Encode(vmloop.RETV, 0, 0, 0, 0)}}}}
	require.EqualError(t, vmloop.Verify(p, nil), "vmloop: verify: main@0: add: r0 is read as i64 before it is written; write it on every path before reading it")
	p.File = "a\nb.jasm"
	require.ErrorContains(t, vmloop.Verify(p, nil), `vmloop: verify: "a\nb.jasm": main@0: add: r0`)
}
