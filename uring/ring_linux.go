//go:build linux

package uring

// The raw ring: setup with a flag ladder, the three mappings, the probe,
// and the SQ/CQ index arithmetic. Nothing here knows about ops or tokens;
// callers serialise access (the Ring backend holds its mutex).

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is one mapped io_uring instance.
//
// Memory ordering (notes/io-backend-facts.md §1.6). Go's sync/atomic is
// sequentially consistent, which is at least the acquire/release that the
// ring protocol needs:
//   - SQ tail: written only by us; store-release after the SQE is filled
//     (publish). Without SQPOLL the kernel reads it inside io_uring_enter,
//     but the release store costs nothing extra on amd64/arm64.
//   - SQ head: written by the kernel; load before reusing an SQE slot.
//   - SQ flags (CQ_OVERFLOW, TASKRUN): kernel-written; atomic load.
//   - CQ tail: written by the kernel; load-acquire before reading CQEs.
//   - CQ head: written only by us; store-release after the CQEs were
//     copied out, which hands their slots back to the kernel.
type ring struct {
	fd         int
	flags      uint32 // setup flags that took
	features   uint32
	sqEntries  uint32
	cqEntries  uint32
	sqMask     uint32
	cqMask     uint32
	sqTailLoc  uint32 // our copy of the SQ tail (owner-only)
	cqHeadLoc  uint32 // our copy of the CQ head (owner-only)
	sqHead     *uint32
	sqTail     *uint32
	sqFlags    *uint32
	sqDropped  *uint32
	cqHead     *uint32
	cqTail     *uint32
	cqOverflow *uint32
	sqes       []sqe
	cqes       []cqe
	maps       []mapping
	supported  [opLast]bool // opcode probe
}

type mapping struct {
	p unsafe.Pointer
	n uintptr
}

// setupHook lets tests pretend io_uring_setup failed (forced fallback).
var setupHook func() error

// ioUringSetup calls io_uring_setup(2).
func ioUringSetup(entries uint32, p *params) (int, error) {
	if setupHook != nil {
		if err := setupHook(); err != nil {
			return -1, err
		}
	}
	fd, _, errno := unix.Syscall(sysSetup, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// newRing creates a ring, trying each flag set of ladder in order (best
// first) and keeping the first the kernel accepts. Only EINVAL moves down
// the ladder: it is what an unknown flag yields. CQSIZE|CLAMP are added to
// every rung so that cqEntries (0: twice entries) is honoured.
func newRing(entries, cqEntries uint32, ladder []uint32) (*ring, error) {
	if cqEntries < 2*entries {
		cqEntries = 2 * entries
	}
	var (
		p   params
		fd  = -1
		err error
	)
	for i, fl := range ladder {
		p = params{Flags: fl | setupCQSize | setupClamp, CQEntries: cqEntries}
		fd, err = ioUringSetup(entries, &p)
		if err == nil || !errors.Is(err, unix.EINVAL) || i == len(ladder)-1 {
			break
		}
	}
	if err != nil {
		return nil, setupError(err)
	}
	r := &ring{fd: fd, flags: p.Flags, features: p.Features}
	if err := r.mmap(&p); err != nil {
		r.close()
		return nil, err
	}
	r.probe()
	return r, nil
}

// setupError adds the usual diagnosis to an io_uring_setup errno.
func setupError(err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("uring: setup: %w (kernel.io_uring_disabled sysctl or a seccomp profile forbids io_uring)", err)
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("uring: setup: %w (kernel without io_uring)", err)
	case errors.Is(err, unix.ENOMEM):
		return fmt.Errorf("uring: setup: %w (RLIMIT_MEMLOCK too low on kernels before 5.12?)", err)
	}
	return fmt.Errorf("uring: setup: %w", err)
}

func (r *ring) mapRegion(off int64, n uintptr) (unsafe.Pointer, error) {
	p, err := unix.MmapPtr(r.fd, off, nil, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("uring: mmap: %w", err)
	}
	r.maps = append(r.maps, mapping{p, n})
	return p, nil
}

// mmap maps the SQ ring, the CQ ring (shared with the SQ ring under
// FEAT_SINGLE_MMAP) and the SQE array. Every offset comes from p.
func (r *ring) mmap(p *params) error {
	sqLen := uintptr(p.SQOff.Array) + uintptr(p.SQEntries)*4
	cqLen := uintptr(p.CQOff.Cqes) + uintptr(p.CQEntries)*unsafe.Sizeof(cqe{})
	single := p.Features&featSingleMmap != 0
	if single {
		sqLen = max(sqLen, cqLen)
	}
	sq, err := r.mapRegion(offSQRing, sqLen)
	if err != nil {
		return err
	}
	cq := sq
	if !single {
		if cq, err = r.mapRegion(offCQRing, cqLen); err != nil {
			return err
		}
	}
	sqesPtr, err := r.mapRegion(offSQEs, uintptr(p.SQEntries)*unsafe.Sizeof(sqe{}))
	if err != nil {
		return err
	}
	u32 := func(base unsafe.Pointer, off uint32) *uint32 { return (*uint32)(unsafe.Add(base, off)) }
	r.sqEntries, r.cqEntries = p.SQEntries, p.CQEntries
	r.sqHead, r.sqTail = u32(sq, p.SQOff.Head), u32(sq, p.SQOff.Tail)
	r.sqFlags, r.sqDropped = u32(sq, p.SQOff.Flags), u32(sq, p.SQOff.Dropped)
	r.sqMask = *u32(sq, p.SQOff.RingMask)
	r.cqHead, r.cqTail = u32(cq, p.CQOff.Head), u32(cq, p.CQOff.Tail)
	r.cqOverflow = u32(cq, p.CQOff.Overflow)
	r.cqMask = *u32(cq, p.CQOff.RingMask)
	r.sqes = unsafe.Slice((*sqe)(sqesPtr), p.SQEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Add(cq, p.CQOff.Cqes)), p.CQEntries)
	// The SQ index array maps ring positions to SQE slots. We fill SQEs in
	// ring order, so the identity map is written once and never changes.
	array := unsafe.Slice((*uint32)(unsafe.Add(sq, p.SQOff.Array)), p.SQEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqTailLoc = atomic.LoadUint32(r.sqTail)
	r.cqHeadLoc = atomic.LoadUint32(r.cqHead)
	return nil
}

// probe fills r.supported with IORING_REGISTER_PROBE (5.6). A failing
// probe leaves every op unsupported, which makes Open fall back.
func (r *ring) probe() {
	pr := new(probe)
	_, _, errno := unix.Syscall6(sysRegister, uintptr(r.fd), registerProbe, uintptr(unsafe.Pointer(pr)), opLast, 0, 0)
	if errno != 0 {
		return
	}
	for i := 0; i < int(pr.OpsLen) && i < opLast; i++ {
		if pr.Ops[i].Flags&probeSupported != 0 {
			r.supported[pr.Ops[i].Op] = true
		}
	}
}

// close unmaps and closes. Safe on a partly built ring.
func (r *ring) close() error {
	for _, m := range r.maps {
		_ = unix.MunmapPtr(m.p, m.n)
	}
	r.maps, r.sqes, r.cqes = nil, nil, nil
	var err error
	if r.fd >= 0 {
		err = unix.Close(r.fd)
		r.fd = -1
	}
	return err
}

// sqSpace is the number of free SQ entries.
func (r *ring) sqSpace() uint32 {
	return r.sqEntries - (r.sqTailLoc - loadAcquire(r.sqHead))
}

// nextSQE returns a zeroed SQE at the local tail, or nil when the SQ is
// full. The entry becomes visible to the kernel only at publish.
func (r *ring) nextSQE() *sqe {
	if r.sqSpace() == 0 {
		return nil
	}
	e := &r.sqes[r.sqTailLoc&r.sqMask]
	*e = sqe{}
	r.sqTailLoc++
	return e
}

// publish store-releases the SQ tail, making every filled SQE visible.
func (r *ring) publish() { storeRelease(r.sqTail, r.sqTailLoc) }

// loadAcquire and storeRelease name the ordering each ring access needs.
// sync/atomic is sequentially consistent, which implies both.
func loadAcquire(p *uint32) uint32     { return atomic.LoadUint32(p) }
func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

// unsubmitted counts published SQEs the kernel has not consumed yet.
func (r *ring) unsubmitted() uint32 { return r.sqTailLoc - loadAcquire(r.sqHead) }

// flagSet reports whether the kernel set bit in the SQ flags word.
func (r *ring) flagSet(bit uint32) bool { return loadAcquire(r.sqFlags)&bit != 0 }

// enter calls io_uring_enter(2). Blocking waits go through unix.Syscall6,
// never RawSyscall, so the Go runtime sees the thread in a syscall and a
// GC stop does not wait on it.
func (r *ring) enter(toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSz uintptr) (int, error) {
	n, _, errno := unix.Syscall6(sysEnter, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete),
		uintptr(flags), uintptr(arg), argSz)
	runtime.KeepAlive(arg)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// setupFlagString names the reported setup flags of fl, for Reason.
func setupFlagString(fl uint32) string {
	names := []struct {
		bit  uint32
		name string
	}{
		{setupSingleIssuer, "SINGLE_ISSUER"}, {setupDeferTaskrun, "DEFER_TASKRUN"},
		{setupCoopTaskrun, "COOP_TASKRUN"}, {setupTaskrunFlag, "TASKRUN_FLAG"},
		{setupSubmitAll, "SUBMIT_ALL"}, {setupCQSize, "CQSIZE"}, {setupClamp, "CLAMP"},
	}
	var parts []string
	for _, n := range names {
		if fl&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}
