package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryFunctionFile: version 5 keeps a function's own source file (a
// function linked in from a module), and a stack frame, a verifier error
// and FuncFile name it; a version 4 file may not set the flag.
func TestBinaryFunctionFile(t *testing.T) {
	retv := Encode(RETV, 0, 0, 0, 0)
	p := vtProg(vtFn("main", nil, TVoid, 0, retv), vtFn("bytes.f", nil, TVoid, 0, retv))
	p.File = "main.jasm"
	p.Funcs[1].File = "std/bytes.jasm"
	p.Funcs[1].Lines = []int32{7}
	data, err := p.MarshalBinary()
	require.NoError(t, err)
	q, err := UnmarshalProgram(data)
	require.NoError(t, err)
	require.Equal(t, "", q.Funcs[0].File)
	require.Equal(t, "std/bytes.jasm", q.Funcs[1].File)
	require.Equal(t, "main.jasm", q.FuncFile(0))
	require.Equal(t, "std/bytes.jasm", q.FuncFile(1))
	require.Equal(t, "", q.FuncFile(2))

	// The verifier names the function's own file.
	q.Funcs[1].Code = []Instr{Encode(RET, 0, 0, 0, 0)}
	err = Verify(q, nil)
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "std/bytes.jasm", ve.File)
	require.Equal(t, 7, ve.Line)

	// Version 4 does not know the flag.
	old := vtBin("JADE").u16(4).u16(1).u16(0).str("").uv(0).uv(0).uv(0).uv(0).uv(0).uv(0).
		uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(binDebugFile).str("x.jasm")
	_, err = UnmarshalProgram(old)
	require.ErrorContains(t, err, "unknown debug flags 0x10")
	// Version 5 does.
	cur := vtBin("JADE").u16(5).u16(1).u16(0).str("").uv(0).uv(0).uv(0).uv(0).uv(0).uv(0).
		uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(binDebugFile).str("x.jasm")
	q, err = UnmarshalProgram(cur)
	require.NoError(t, err)
	require.Equal(t, "x.jasm", q.Funcs[0].File)
}
