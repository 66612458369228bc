package native

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
	"github.com/jadevm/jade/vmloop"
)

func needC(t testing.TB) {
	t.Helper()
	if !Available() {
		t.Skip("C loop not compiled in (CGO_ENABLED=0 or -tags purego)")
	}
	if !Enabled() {
		Enable()
	}
}

// TestOpcodeNumbering checks loop.c's opcode numbers against vmloop.
func TestOpcodeNumbering(t *testing.T) {
	needC(t)
	n := 0
	for op := 0; op < 256; op++ {
		name := opName(op)
		if name == "" {
			break
		}
		n++
		if got, ok := vmloop.OpByName(name); !ok || int(got) != op {
			t.Errorf("loop.c numbers %q as %d; vmloop: %d (%v)", name, op, got, ok)
		}
	}
	if n != int(vmloop.TAILCALL)+1 {
		t.Errorf("loop.c knows %d opcodes, want nop..tailcall (%d)", n, vmloop.TAILCALL+1)
	}
	for op := 0; op < 256; op++ {
		name := opName2(op)
		if name == "" {
			continue
		}
		if got, ok := vmloop.OpByName(name); !ok || int(got) != op {
			t.Errorf("loop.c numbers %q as %d; vmloop: %d (%v)", name, op, got, ok)
		}
	}
	if HotOp(vmloop.LDS) || !HotOp(vmloop.TAILCALL) || !HotOp(vmloop.BGET) || HotOp(vmloop.BNEW) {
		t.Error("HotOp disagrees with doc.go")
	}
}

// TestSelection checks the switches: Disable, Enable and Exec.SetNative.
func TestSelection(t *testing.T) {
	needC(t)
	p := mustProgram(t, "fib", srcFib)
	e, err := vmloop.NewExec(p, entryOf(p), []vmloop.Value{vmloop.I64(10)}, vmloop.DefaultLimits, 1)
	require.NoError(t, err)
	require.True(t, e.NativeUsed(), "native loop not used by default")
	e.SetNative(false)
	if e.NativeUsed() {
		t.Fatal("SetNative(false) ignored")
	}
	e.SetNative(true)
	Disable()
	if e.NativeUsed() || Enabled() {
		t.Fatal("Disable ignored")
	}
	if !Enable() || !e.NativeUsed() {
		t.Fatal("Enable failed")
	}
	// switching loops between slices of one task is allowed
	for i := 0; ; i++ {
		e.SetNative(i%2 == 0)
		if sig := e.Run(50); sig != vmloop.SigPreempted {
			if sig != vmloop.SigCompleted || e.Result().Int() != 55 {
				t.Fatalf("%v %v", sig, e.Result())
			}
			break
		}
	}
}

// TestEnvVar checks that JADE_NATIVE=0 keeps the C loop unregistered (in a
// child process, since the variable is read at init).
func TestEnvVar(t *testing.T) {
	if os.Getenv("JADE_NATIVE_TEST_CHILD") == "1" {
		if Enabled() {
			t.Fatal("JADE_NATIVE=0 but the C loop is registered")
		}
		return
	}
	if !Available() {
		t.Skip("C loop not compiled in")
	}
	feature.Exec(t, os.Args[0])
	cmd := exec.Command(os.Args[0], "-test.run=^TestEnvVar$")
	cmd.Env = append(os.Environ(), EnvVar+"=0", "JADE_NATIVE_TEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child\n%s", out)
}
