//go:build linux

package uring

import (
	"testing"
	"unsafe"
)

// TestABISizes pins the struct layouts to the uapi header (io_uring.h).
func TestABISizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"io_uring_params", unsafe.Sizeof(params{}), 120},
		{"io_sqring_offsets", unsafe.Sizeof(sqringOffsets{}), 40},
		{"io_cqring_offsets", unsafe.Sizeof(cqringOffsets{}), 40},
		{"io_uring_sqe", unsafe.Sizeof(sqe{}), 64},
		{"io_uring_cqe", unsafe.Sizeof(cqe{}), 16},
		{"io_uring_getevents_arg", unsafe.Sizeof(getEventsArg{}), 24},
		{"io_uring_probe_op", unsafe.Sizeof(probeOp{}), 8},
		{"io_uring_probe header", unsafe.Offsetof(probe{}.Ops), 16},
		{"__kernel_timespec", unsafe.Sizeof(kernelTimespec{}), 16},
	} {
		if c.got != c.want {
			t.Errorf("sizeof(%s) = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestABIOffsets pins the field offsets the kernel relies on.
func TestABIOffsets(t *testing.T) {
	var p params
	var e sqe
	var c cqe
	for _, o := range []struct {
		name      string
		got, want uintptr
	}{
		{"params.features", unsafe.Offsetof(p.Features), 20},
		{"params.resv", unsafe.Offsetof(p.Resv), 28},
		{"params.sq_off", unsafe.Offsetof(p.SQOff), 40},
		{"params.cq_off", unsafe.Offsetof(p.CQOff), 80},
		{"sq_off.array", unsafe.Offsetof(p.SQOff.Array), 24},
		{"sq_off.user_addr", unsafe.Offsetof(p.SQOff.UserAddr), 32},
		{"cq_off.cqes", unsafe.Offsetof(p.CQOff.Cqes), 20},
		{"cq_off.flags", unsafe.Offsetof(p.CQOff.Flags), 24},
		{"sqe.fd", unsafe.Offsetof(e.Fd), 4},
		{"sqe.off", unsafe.Offsetof(e.Off), 8},
		{"sqe.addr", unsafe.Offsetof(e.Addr), 16},
		{"sqe.len", unsafe.Offsetof(e.Len), 24},
		{"sqe.op_flags", unsafe.Offsetof(e.OpFlags), 28},
		{"sqe.user_data", unsafe.Offsetof(e.UserData), 32},
		{"sqe.buf_index", unsafe.Offsetof(e.BufIndex), 40},
		{"sqe.file_index", unsafe.Offsetof(e.FileIndex), 44},
		{"sqe.addr3", unsafe.Offsetof(e.Addr3), 48},
		{"cqe.res", unsafe.Offsetof(c.Res), 8},
		{"cqe.flags", unsafe.Offsetof(c.Flags), 12},
	} {
		if o.got != o.want {
			t.Errorf("offsetof(%s) = %d, want %d", o.name, o.got, o.want)
		}
	}
}
