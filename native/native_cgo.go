//go:build cgo && !purego && (amd64 || arm64 || riscv64 || ppc64le || loong64 || s390x || mips64 || mips64le || ppc64)

package native

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lm
#cgo noescape jn_run
#cgo nocallback jn_run
#include "loop.h"
const char *jn_op_name(int op);
int jn_hot(int op);
*/
import "C"

import (
	"unsafe"

	"github.com/jadevm/jade/vmloop"
)

// available is true in this build: the C loop is compiled in.
const available = true

// run is the vmloop.NativeLoop of this package: one cgo call into jn_run.
// Every pointer is passed as a call argument (the memory holds no Go
// pointers) and C keeps none after it returns; the in/out scalars live on
// the Go stack (noescape, nocallback).
func run(c vmloop.NativeCall) vmloop.NativeResult {
	np := c.Prog
	io := C.jn_io{
		fp:        C.int64_t(c.FP),
		left:      C.int64_t(c.Left),
		nregs:     C.int64_t(c.NRegs),
		nframes:   C.int64_t(c.NFrames),
		maxframes: C.int64_t(c.MaxFrames),
		kint:      C.int64_t(np.KIntOff),
		kflt:      C.int64_t(np.KFltOff),
	}
	C.jn_run(&io,
		(*C.uint64_t)(c.Regs),
		(*C.jn_frame)(c.Frames),
		(*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(np.Words))),
		(*C.int64_t)(unsafe.Pointer(unsafe.SliceData(np.Funcs))),
		(*C.uint32_t)(c.Stop))
	return vmloop.NativeResult{Exit: int(io.exit), FP: int(io.fp), Left: int64(io.left)}
}

// opName is the C loop's name of opcode op (for the numbering test).
func opName(op int) string {
	p := C.jn_op_name(C.int(op))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// hot reports whether the C loop runs opcode op.
func hot(op int) bool { return C.jn_hot(C.int(op)) != 0 }
