//go:build !gc || !amd64 || race

package relstore

import "sync/atomic"

// Uint32 stores v in *p with release order (package comment): Store.
func Uint32(p *atomic.Uint32, v uint32) {
	p.Store(v)
}

// Uint64 stores v in *p with release order (package comment): Store.
func Uint64(p *atomic.Uint64, v uint64) {
	p.Store(v)
}

// Int32 stores v in *p with release order (package comment): Store.
func Int32(p *atomic.Int32, v int32) {
	p.Store(v)
}
