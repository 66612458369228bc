package vmloop

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuoteNameInMessages: function names from a program are data; one
// that is not a plain identifier prints as a Jade string literal in verify
// errors, traps and stacks, never with a raw newline or escape sequence.
func TestQuoteNameInMessages(t *testing.T) {
	const evil = "f\n[jade] ok\x1b[2K"
	const quoted = `"f\n[jade] ok\x1b[2K"`
	require.Equal(t, "main", QuoteName("main"))
	require.Equal(t, "_x9", QuoteName("_x9"))
	require.Equal(t, quoted, QuoteName(evil))
	require.Equal(t, `"9lives"`, QuoteName("9lives"))
	require.Equal(t, `""`, QuoteName(""))
	require.Equal(t, `"é"`, QuoteName("é"))

	// A verify error in the function, and one naming it as a callee.
	err := Verify(vtProg(vtFn(evil, nil, TVoid, 0, Encode(NOP, 0, 0, 0, 0))), nil)
	require.ErrorContains(t, err, "vmloop: verify: "+quoted+"@0: execution falls off")
	err = Verify(vtProg(vtFn("main", nil, TVoid, 1, Encode(CALL, 0, 0, 0, 1), Encode(RETV, 0, 0, 0, 0)), vtFn(evil, vtI, TVoid, 1, Encode(RETV, 0, 0, 0, 0))), nil)
	require.ErrorContains(t, err, "call to "+quoted+" passes 0 arguments")

	tr := TrapInfo{Code: TrapDivZero, Func: evil, PC: 3}
	require.Equal(t, "trap at "+quoted+"@3: division by zero", tr.Error())
	st := Stack{Frames: []StackFrame{{Func: evil, PC: 3, File: "x.jasm", Line: 4}}, Depth: 1}
	require.Equal(t, "  at "+quoted+"@3 (x.jasm:4)", st.String())
	for _, s := range []string{err.Error(), tr.Error(), st.String()} {
		require.False(t, strings.ContainsAny(s, "\n\x1b"), "%q", s)
	}

	// A trap of no instruction has no "@-1".
	require.Equal(t, "trap: heap limit: too big", TrapInfo{Code: TrapHeapLimit, PC: -1, Msg: "too big"}.Error())
	require.Equal(t, "trap in "+quoted+": heap limit", TrapInfo{Code: TrapHeapLimit, Func: evil, PC: -1}.Error())
}
