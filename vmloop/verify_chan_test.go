package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// vtChanProg makes a channel with chan.new_i64, copies its handle and
// calls send on it with an i64 or an f64, through a loop and a handler
// edge (the flow the element-type pass follows).
func vtChanProg(send string) *Program {
	val := Encode(LDI, 2, 0, 0, 7)
	if send == "chan.send_f64" {
		val = Encode(ITOF, 2, 3, 0, 0)
	}
	f := vtWithHandlers(vtFn("main", nil, TI64, 4,
		Encode(LDI, 0, 0, 0, 4),  // 0: cap
		Encode(INTR, 0, 0, 1, 0), // 1: r0 = chan.new_i64 r0
		Encode(LDI, 3, 0, 0, 1),  // 2
		Encode(MOVR, 1, 0, 0, 0), // 3: r1 = r0
		val,                      // 4: r2 = the value
		Encode(INTR, 1, 0, 2, 1), // 5: send r1, r2 (in the handler's range)
		Encode(SUBI, 3, 3, 0, 1), // 6
		Encode(JNZ, 3, 0, 0, 3),  // 7: loop back to the copy
		Encode(RET, 3, 0, 0, 0),  // 8
		Encode(LDI, 3, 0, 0, -1), // 9: handler
		Encode(RET, 3, 0, 0, 0)), // 10
		Handler{5, 6, 9, 1})
	p := vtProg(f)
	p.ABI = Version{1, 5}
	return vtImports(p, "chan.new_i64", send)
}

// TestVerifyChanElems: a typed channel operation on a register that holds
// a channel of another element type on every path is refused with its pc;
// the matching type is accepted, and so is a channel of unknown type.
func TestVerifyChanElems(t *testing.T) {
	require.NoError(t, vfVerify(vtChanProg("chan.send_i64"), nil))
	err := vfVerify(vtChanProg("chan.send_f64"), nil)
	require.Error(t, err)
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, 5, ve.PC)
	require.Contains(t, ve.Reason, "intr chan.send_f64: r1 holds a channel of i64 elements (made by chan.new_i64) on every path, not of f64")

	// A parameter's channel is of unknown element type: left to run time.
	p := vtProg(vtFn("main", []Type{TRef}, TVoid, 3,
		Encode(MOVR, 1, 0, 0, 0),
		Encode(LDI, 2, 0, 0, 1),
		Encode(ITOF, 2, 2, 0, 0),
		Encode(INTR, 1, 0, 2, 0),
		Encode(RET, 0, 0, 0, 0)))
	p.Funcs[0].Code[4] = Encode(RETV, 0, 0, 0, 0)
	p.ABI = Version{1, 5}
	require.NoError(t, vfVerify(vtImports(p, "chan.send_f64"), nil))
}
