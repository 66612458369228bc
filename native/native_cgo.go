//go:build cgo && !purego && (amd64 || arm64 || riscv64 || ppc64le || loong64 || s390x || mips64 || mips64le || ppc64)

package native

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lm
#cgo noescape jn_run
#cgo nocallback jn_run
#cgo noescape jn_prepare
#cgo nocallback jn_prepare
#cgo noescape jn_prep_size
#cgo nocallback jn_prep_size
#include "loop.h"
const char *jn_op_name(int op);
const char *jn_op_name2(int op);
int jn_hot(int op);
*/
import "C"

import (
	"unsafe"

	"github.com/jadevm/jade/internal/vmhook"
)

// available is true in this build: the C loop is compiled in.
const available = true

// vmhook.Bufs is passed to C as a jn_bufs: the same layout.
var (
	_ [unsafe.Sizeof(vmhook.Bufs{}) - unsafe.Sizeof(C.jn_bufs{})]struct{}
	_ [unsafe.Sizeof(C.jn_bufs{}) - unsafe.Sizeof(vmhook.Bufs{})]struct{}
	_ [vmhook.BufSlots - C.JN_NBUFS]struct{}
	_ [C.JN_NBUFS - vmhook.BufSlots]struct{}
)

// run is the vmhook.Loop of this package: one cgo call into jn_run.
// Every pointer is passed as a call argument (the memory holds no Go
// pointers but the pinned buffers of c.Bufs) and C keeps none after it
// returns; the in/out scalars live on the Go stack (noescape, nocallback).
func run(c vmhook.Call) vmhook.Result {
	np := c.Prog
	pp := np.Ext.Load()
	if pp == nil {
		pp = prepare(np)
	}
	prog := *pp
	io := C.jn_io{
		fp:        C.int64_t(c.FP),
		left:      C.int64_t(c.Left),
		nregs:     C.int64_t(c.NRegs),
		nframes:   C.int64_t(c.NFrames),
		maxframes: C.int64_t(c.MaxFrames),
	}
	C.jn_run(&io,
		(*C.uint64_t)(c.Regs),
		(*C.jn_frame)(c.Frames),
		(*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(prog))),
		(*C.uint32_t)(c.Stop),
		(*C.jn_bufs)(c.Bufs))
	return vmhook.Result{Exit: int(io.exit), FP: int(io.fp), Left: int64(io.left)}
}

// prepare makes the program as jn_run runs it (jn_prepare: a handler word
// and an operand word per instruction, superinstructions, the function
// table) and keeps it in np.Ext, once per program (the first one made
// wins). It holds no Go pointers (the handler words are addresses of C
// code, valid in this process only).
func prepare(np *vmhook.Program) *[]uint64 {
	nf := len(np.Funcs) / vmhook.FuncWords
	nw := C.int64_t(len(np.Words))
	out := make([]uint64, C.jn_prep_size(nw, C.int64_t(np.KIntOff), C.int64_t(nf)))
	C.jn_prepare((*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(out))),
		(*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(np.Words))), nw,
		(*C.int64_t)(unsafe.Pointer(unsafe.SliceData(np.Funcs))), C.int64_t(nf),
		C.int64_t(np.KIntOff), C.int64_t(np.KFltOff))
	np.Ext.CompareAndSwap(nil, &out)
	return np.Ext.Load()
}

// opName is the C loop's name of opcode op (for the numbering test): the
// range nop..tailcall, then "" past it.
func opName(op int) string {
	p := C.jn_op_name(C.int(op))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// opName2 is the C loop's name of opcode op past the range of opName that
// it runs itself (blen bget bset), else "".
func opName2(op int) string {
	p := C.jn_op_name2(C.int(op))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// hot reports whether the C loop runs opcode op.
func hot(op int) bool { return C.jn_hot(C.int(op)) != 0 }
