package jprof

import (
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestSymbolsFunctionFile: a function linked in from a module is filed
// under its own source file in the profile, the others under the
// program's.
func TestSymbolsFunctionFile(t *testing.T) {
	prog := &vmloop.Program{File: "main.jasm", Funcs: []vmloop.Function{
		{Name: "main", Code: make([]vmloop.Instr, 1), Lines: []int32{3}},
		{Name: "bytes.trim", File: "std/bytes.jasm", Code: make([]vmloop.Instr, 1), Lines: []int32{40}},
	}}
	s := newSymbols(&profile.Profile{})
	locs := s.stack(prog, []vmloop.ProfFrame{{Fn: 1, PC: 0}, {Fn: 0, PC: 0}})
	require.Equal(t, "std/bytes.jasm", locs[0].Line[0].Function.Filename)
	require.Equal(t, int64(40), locs[0].Line[0].Line)
	require.Equal(t, "main.jasm", locs[1].Line[0].Function.Filename)
	require.Equal(t, unknownFile, funcFile(&vmloop.Program{Funcs: []vmloop.Function{{}}}, 0))
}
