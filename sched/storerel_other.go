//go:build !amd64 || race

package sched

import "sync/atomic"

// storeRelease publishes v in *p with release ordering (storerel_amd64.go).
func storeRelease(p *atomic.Uint32, v uint32) {
	p.Store(v)
}
