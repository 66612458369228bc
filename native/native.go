package native

import (
	"github.com/jadevm/jade/internal/vmhook"
	"os"

	"github.com/jadevm/jade/vmloop"
)

// EnvVar is the environment variable that turns the native loop off for the
// whole process when set to "0" (read once, at init).
const EnvVar = "JADE_NATIVE"

// Available reports whether the C loop is compiled into this binary (cgo,
// a 64-bit platform, and no purego build tag) and vmloop can use it (not
// the jadecheck build).
func Available() bool { return available && !vmhook.Unsupported }

// Enable registers the C loop with vmloop, so that every Exec's Run uses it
// unless the Exec opted out with Exec.SetNative(false). It reports whether
// the C loop is available (nothing is registered when it is not). Importing
// this package already enables it, unless JADE_NATIVE=0.
func Enable() bool {
	if !Available() {
		return false
	}
	vmhook.SetLoop(run)
	return true
}

// Disable unregisters the C loop: every Exec runs the Go loop.
func Disable() { vmhook.SetLoop(nil) }

// Enabled reports whether the C loop is registered with vmloop.
func Enabled() bool { return vmhook.LoopSet() }

// HotOp reports whether the C loop executes opcode op itself (the other
// opcodes return to Go, see the package documentation).
func HotOp(op vmloop.Op) bool { return hot(int(op)) }

func init() {
	if os.Getenv(EnvVar) != "0" {
		Enable()
	}
}
