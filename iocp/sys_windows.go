//go:build windows

package iocp

import (
	"errors"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// x/sys/windows has no GetQueuedCompletionStatusEx; it lives in
// kernel32.dll (Vista and later) and is loaded from System32 only.
var (
	modkernel32                     = windows.NewLazySystemDLL("kernel32.dll")
	procGetQueuedCompletionStatusEx = modkernel32.NewProc("GetQueuedCompletionStatusEx")
)

// overlappedEntry is OVERLAPPED_ENTRY (32 bytes on 64-bit Windows).
type overlappedEntry struct {
	key      uintptr
	ov       *windows.Overlapped
	internal uintptr
	qty      uint32
}

// getQueuedCompletionStatusEx dequeues up to len(ents) packets, waiting at
// most ms milliseconds (windows.INFINITE: no limit). A timeout with
// nothing dequeued is (0, nil).
func getQueuedCompletionStatusEx(port windows.Handle, ents []overlappedEntry, ms uint32) (int, error) {
	var n uint32
	r, _, e := syscall.SyscallN(procGetQueuedCompletionStatusEx.Addr(),
		uintptr(port), uintptr(unsafe.Pointer(&ents[0])), uintptr(len(ents)),
		uintptr(unsafe.Pointer(&n)), uintptr(ms), 0)
	if r == 0 {
		if e == windows.WAIT_TIMEOUT {
			return 0, nil
		}
		if e == 0 {
			return 0, syscall.EINVAL
		}
		return 0, e
	}
	return int(n), nil
}

// msTimeout converts a Wait timeout to IOCP milliseconds, rounding up so
// that a wait never ends early; rem < 0 is INFINITE.
func msTimeout(rem time.Duration) uint32 {
	if rem < 0 {
		return windows.INFINITE
	}
	ms := (rem + time.Millisecond - 1) / time.Millisecond
	if ms >= windows.INFINITE {
		ms = windows.INFINITE - 1
	}
	return uint32(ms)
}

// bufPtr returns the address of p's first byte, or nil for an empty p.
func bufPtr(p []byte) *byte {
	if len(p) == 0 {
		return nil
	}
	return &p[0]
}

// errnoOf extracts the Windows error code of err, or ERROR_GEN_FAILURE
// when err carries none.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return windows.ERROR_GEN_FAILURE
}
