package std_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/native"
	"github.com/jadevm/jade/std"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// TestModules runs the jasm tests of every standard module: each test_*
// function of NAME_test.jasm, linked with the module it imports, on the Go
// loop and on the C loop (where this build has it). A test returns 0, or
// the number of the check that failed.
func TestModules(t *testing.T) {
	files, err := fs.Glob(std.Files, "*_test.jasm")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		p, err := jasm.AssembleFile(file, jasm.LinkOptions{NoStd: true})
		require.NoError(t, err)
		require.NoError(t, vmloop.Verify(p, nil), "%s", file)
		n := 0
		for i := range p.Funcs {
			name := p.Funcs[i].Name
			if !strings.HasPrefix(name, "test_") {
				continue
			}
			n++
			for _, loop := range []string{"go", "native"} {
				t.Run(strings.TrimSuffix(file, ".jasm")+"/"+name+"/"+loop, func(t *testing.T) {
					if loop == "native" && !native.Available() {
						t.Skip("the C loop is not in this build (purego or no cgo)")
					}
					runTest(t, p, i, loop == "native")
				})
			}
		}
		require.NotZero(t, n, "%s has no test_ functions", file)
	}
}

func runTest(t *testing.T, p *vmloop.Program, fn int, nat bool) {
	e, err := vmloop.NewExec(p, fn, nil, vmloop.DefaultLimits, 1)
	require.NoError(t, err)
	defer e.Free()
	e.SetNative(nat)
	sig := vmloop.SigPreempted
	for i := 0; i < 100000 && sig == vmloop.SigPreempted; i++ {
		sig = e.Run(1000)
	}
	require.Equal(t, vmloop.SigCompleted, sig, "%v (trap %v, thrown %v)", sig, e.Trap(), e.Thrown())
	require.Zero(t, e.Result().Int(), "check %d failed", e.Result().Int())
}
