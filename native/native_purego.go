//go:build !cgo || purego || !(amd64 || arm64 || riscv64 || ppc64le || loong64 || s390x || mips64 || mips64le || ppc64)

package native

import "github.com/jadevm/jade/internal/vmhook"

// available is false in this build (CGO_ENABLED=0, -tags purego, or a
// 32-bit platform): only the Go loop exists.
const available = false

func run(c vmhook.Call) vmhook.Result {
	panic("native: the C loop is not compiled in")
}

func opName(op int) string { return "" }

func opName2(op int) string { return "" }

func hot(op int) bool { return false }
