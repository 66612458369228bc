//go:build linux && amd64 && gc && !race

package asymfence

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jadevm/jade/internal/relstore"
)

// membarrier(2) commands (include/uapi/linux/membarrier.h).
const (
	cmdPrivateExpedited         = 1 << 3
	cmdRegisterPrivateExpedited = 1 << 4
)

// asymmetric is set once, before any goroutine can call StoreUint32 or
// Heavy (package initialization), and never changed after.
var asymmetric = register()

// register asks the kernel for private expedited barriers; false when
// JADE_ASYMFENCE=off, or the kernel (or a seccomp filter) refuses.
func register() bool {
	if os.Getenv("JADE_ASYMFENCE") == "off" {
		return false
	}
	_, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, cmdRegisterPrivateExpedited, 0, 0)
	return errno == 0
}

// Asymmetric reports whether StoreUint32 is a release store paired with a
// membarrier in Heavy (package comment).
func Asymmetric() bool { return asymmetric }

// StoreUint32 is the light side's store of *p: a release store when
// Asymmetric, else Store.
func StoreUint32(p *atomic.Uint32, v uint32) {
	if asymmetric {
		relstore.Uint32(p, v)
		return
	}
	p.Store(v)
}

// StoreUint64 is StoreUint32 for a 64-bit word.
func StoreUint64(p *atomic.Uint64, v uint64) {
	if asymmetric {
		relstore.Uint64(p, v)
		return
	}
	p.Store(v)
}

// Heavy is the heavy side's barrier, between its store and its load: a
// full memory barrier on every running thread of the process when
// Asymmetric, else nothing.
func Heavy() {
	if !asymmetric {
		return
	}
	if _, _, errno := unix.Syscall(unix.SYS_MEMBARRIER, cmdPrivateExpedited, 0, 0); errno != 0 {
		// Registered at start, so the kernel has no reason to refuse:
		// a refusal would leave the light side's stores unordered.
		panic("asymfence: membarrier: " + errno.Error())
	}
}
