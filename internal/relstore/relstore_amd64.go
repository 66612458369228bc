//go:build gc && amd64 && !race

package relstore

import (
	"sync/atomic"
	"unsafe"
)

// Uint32 stores v in *p with release order (package comment): a plain
// store on amd64.
func Uint32(p *atomic.Uint32, v uint32) {
	*(*uint32)(unsafe.Pointer(p)) = v
}

// Uint64 stores v in *p with release order (package comment): a plain
// store on amd64.
func Uint64(p *atomic.Uint64, v uint64) {
	*(*uint64)(unsafe.Pointer(p)) = v
}

// Int32 stores v in *p with release order (package comment): a plain
// store on amd64.
func Int32(p *atomic.Int32, v int32) {
	*(*int32)(unsafe.Pointer(p)) = v
}
