package jade_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// TestREADMEModuleProgram: the README's program that imports std links
// with the built-in standard library, verifies and returns what its
// comment says.
func TestREADMEModuleProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "```jasm\n.import \"std/bytes\"")
	require.True(t, ok, "README.md has no jasm program importing std/bytes")
	src, _, ok := strings.Cut(".import \"std/bytes\""+rest, "```")
	require.True(t, ok)
	// Linked from a directory with no std/ of its own: the built-in one.
	p, err := jasm.Link(filepath.Join(t.TempDir(), "hello.jasm"), []byte(src), jasm.LinkOptions{})
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	e, err := vmloop.NewExec(p, p.FuncIndex("main"), []vmloop.Value{vmloop.StrArray(nil)}, vmloop.DefaultLimits, 1)
	require.NoError(t, err)
	defer e.Free()
	var printed []string
	sig := vmloop.SigPreempted
	for i := 0; i < 1000 && sig != vmloop.SigCompleted; i++ {
		sig = e.Run(1000)
		if sig == vmloop.SigIntrinsic {
			s, err := e.ArgObj(0, vmloop.KindString)
			require.NoError(t, err)
			printed = append(printed, s.(string))
			e.Complete(vmloop.Void())
			sig = vmloop.SigPreempted
		}
	}
	require.Equal(t, vmloop.SigCompleted, sig, "%v", e.Trap())
	require.Equal(t, []string{"content-type: text/plain"}, printed)
	require.Equal(t, int64(24), e.Result().Int())
}

// TestREADMEChannelProgram: the README's channel program ("How tasks
// talk") runs and returns the sum its comment gives.
func TestREADMEChannelProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "## How tasks talk")
	require.True(t, ok, "README.md has no \"How tasks talk\" section")
	_, rest, ok = strings.Cut(rest, "```\n")
	require.True(t, ok)
	src, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	rt, err := jade.New(jade.Options{Workers: 2})
	require.NoError(t, err)
	defer rt.Close(context.Background())
	p, err := rt.Load("talk.jasm", []byte(src))
	require.NoError(t, err)
	task, err := rt.Spawn(p, "main", vmloop.StrArray(nil))
	require.NoError(t, err)
	o, err := task.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(5050), o.Value.Int(), "%v", o)
}
