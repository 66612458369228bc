package vmloop

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStackString: frames print with their source position when the debug
// information has one, and a deep stack counts the frames it left out.
func TestStackString(t *testing.T) {
	s := Stack{Frames: []StackFrame{{Func: "f", PC: 1, File: "a.jasm", Line: 9}, {Func: "main", PC: 4}}, Depth: 40}
	require.Equal(t, "  at f@1 (a.jasm:9)\n  at main@4\n  ... 38 more frames", s.String())
	ti := TrapInfo{Code: TrapDivZero, Msg: "div 3 by 0", Func: "f", PC: 1, Line: 9}
	require.Equal(t, "trap at f@1 (line 9): division by zero: div 3 by 0", ti.Error())
}
