package vmloop

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vtBigProgram returns a program whose main function has about n
// instructions: chunks of a counted loop with f64 and string work, a forward
// branch, a call inside a .try range and a handler.
func vtBigProgram(n int) *Program {
	var code []Instr
	var hs []Handler
	for len(code) < n {
		s := int32(len(code))
		code = append(code,
			Encode(LDI, 1, 0, 0, 3),
			Encode(LDI, 2, 0, 0, 0),
			Encode(ADD, 2, 2, 1, 0), // s+2: loop
			Encode(ITOF, 10, 2, 0, 0),
			Encode(FADD, 10, 10, 10, 0),
			Encode(FTOI, 3, 10, 0, 0),
			Encode(LDS, 20, 0, 0, 0),
			Encode(SLEN, 4, 20, 0, 0),
			Encode(ADD, 2, 2, 4, 0),
			Encode(JZ, 3, 0, 0, s+11),
			Encode(SUBI, 1, 1, 0, 1),
			Encode(MOVI, 40, 2, 0, 0), // s+11: try [s+11, s+13)
			Encode(CALL, 40, 0, 1, 1),
			Encode(ADD, 2, 2, 40, 0),
			EncodeBC(JGTI, 1, 0, s+2),
			Encode(JMP, 0, 0, 0, s+18),
			Encode(ERRMSG, 21, 30, 0, 0), // s+16: handler, error in r30
			Encode(SLEN, 5, 21, 0, 0))
		hs = append(hs, Handler{uint32(s + 11), uint32(s + 13), uint32(s + 16), 30})
	}
	code = append(code, Encode(RET, 2, 0, 0, 0))
	main := vtWithHandlers(vtFn("main", nil, TI64, 64, code...), hs...)
	return vtProg(main, vtID())
}

func TestVerifyBigFunction(t *testing.T) {
	p := vtBigProgram(100_000)
	vtMustVerify(t, p, nil)
	if n := len(p.Funcs[0].Code); n < 100_000 {
		t.Fatalf("only %d instructions", n)
	}
}

func BenchmarkVerify(b *testing.B) {
	p := vtBigProgram(100_000)
	n := len(p.Funcs[0].Code)
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/instr")
}

// vtChainProgram returns a function of about n instructions made of
// overlapping two-block loops, each writing different registers: the worst
// shape for an iterative dataflow (type bits travel back one loop per sweep).
func vtChainProgram(n int) *Program {
	code := []Instr{Encode(LDI, 1, 0, 0, 0)}
	for i := 1; len(code) < n; i++ {
		pc := int32(len(code))
		r := uint8(1 + i%250)
		code = append(code, Encode(ITOF, r, 0, 0, 0), Encode(LDI, r+1, 0, 0, 0), Encode(JNZ, 0, 0, 0, pc-1))
	}
	code = append(code, Encode(RET, 0, 0, 0, 0))
	return vtProg(vtFn("main", vtI, TI64, 256, code...))
}

// TestVerifyAdversarialFlowIsBounded: pathological control flow either
// verifies or is rejected as too complex (the visit budget) or too large
// (its region states, in this frame of 256 registers).
func TestVerifyAdversarialFlowIsBounded(t *testing.T) {
	n := 60_000
	if testing.Short() {
		n = 6_000
	}
	p := vtChainProgram(n)
	err := Verify(p, nil)
	if err != nil && !strings.Contains(err.Error(), "main@-1: function too complex to verify") &&
		!strings.Contains(err.Error(), "main@-1: function too large to verify") {
		t.Fatal(err)
	}
	t.Logf("%d instructions: %v", len(p.Funcs[0].Code), err)

	// Small functions never hit the budget, however tangled.
	p = vtChainProgram(4000)
	require.NoError(t, Verify(p, nil))
}

// TestVerifyProgramBudget: many functions that each settle just within
// their own visit budget add up; the program's budget refuses them instead
// of spending their number times as long (100 of them took 5.7 s).
func TestVerifyProgramBudget(t *testing.T) {
	fns := make([]Function, 100)
	for i := range fns {
		fns[i] = vtChainProgram(4000).Funcs[0]
		fns[i].Name = "tangled" + strconv.Itoa(i)
	}
	require.NoError(t, Verify(vtProg(fns[0]), nil), "one such function verifies")
	err := Verify(vtProg(fns...), nil)
	require.ErrorContains(t, err, "program too complex to verify")
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	require.NotEmpty(t, ve.Func, "names the function where the budget ran out")
	require.Equal(t, -1, ve.PC)
	require.Contains(t, ve.Reason, "in 100 functions")
	require.Contains(t, ve.Reason, "simplify the control flow")

	// The benign program of the same size verifies.
	n := 0
	for i := range fns {
		n += len(fns[i].Code)
	}
	require.NoError(t, Verify(vtBigProgram(n), nil))
}

// TestVerifyStateBound: a function whose every instruction is a branch
// target in a frame of 256 registers would need 28 times its code in
// region states; it is refused before they are allocated.
func TestVerifyStateBound(t *testing.T) {
	const n = 100_000
	code := make([]Instr, 0, n+1)
	for pc := range n {
		code = append(code, Encode(JMP, 0, 0, 0, int32(pc+1)))
	}
	code = append(code, Encode(RETV, 0, 0, 0, 0))
	err := Verify(vtProg(vtFn("main", nil, TVoid, MaxRegs, code...)), nil)
	require.ErrorContains(t, err, "main@-1: function too large to verify")
	require.ErrorContains(t, err, "register-type state")

	// The same code in a small frame verifies.
	require.NoError(t, Verify(vtProg(vtFn("main", nil, TVoid, 8, code...)), nil))
}
