package sched

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestFrameOfModuleFile: the task dump names a function linked in from a
// module by its own file and line.
func TestFrameOfModuleFile(t *testing.T) {
	p := &vmloop.Program{File: "main.jasm", Funcs: []vmloop.Function{
		{Name: "main", Code: make([]vmloop.Instr, 1), Lines: []int32{3}},
		{Name: "http.parse", File: "std/http.jasm", Code: make([]vmloop.Instr, 2), Lines: []int32{1, 123}},
	}}
	require.Equal(t, "http.parse@1 (std/http.jasm:123)", frameOf(p, vmloop.ProfFrame{Fn: 1, PC: 1}).String())
	require.Equal(t, "main@0 (main.jasm:3)", frameOf(p, vmloop.ProfFrame{Fn: 0, PC: 0}).String())
}
