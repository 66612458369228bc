package jasm

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestRun executes self-checking programs in the Go loop: each main
// returns 0 when every check passes, else the number of the failed check.
// This pins down what the friendly forms mean, not only how they encode.
func TestRun(t *testing.T) {
	for _, file := range []string{"testdata/features.jasm", "testdata/bytes.jasm", "testdata/headers.jasm"} {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		p := mustAssemble(t, file, string(src))
		mustVerify(t, file, p)
		e, err := vmloop.NewExec(p, p.FuncIndex("main"), []vmloop.Value{vmloop.StrArray(nil)}, vmloop.DefaultLimits, 1)
		require.NoError(t, err)
		sig := vmloop.SigPreempted
		for i := 0; i < 10000 && sig == vmloop.SigPreempted; i++ {
			sig = e.Run(1000)
		}
		require.Equal(t, vmloop.SigCompleted, sig, "%s: %v (trap %v, thrown %v)", file, sig, e.Trap(), e.Thrown())
		if got := e.Result().Int(); got != 0 {
			t.Errorf("%s: check %d failed\n%s", file, got, Disassemble(p))
		}
		e.Free()
	}
}
