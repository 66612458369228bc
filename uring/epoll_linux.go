//go:build linux

package uring

// Epoll: the readiness-based emulation of the completion contract.
//
// Each descriptor an op names is registered once, edge-triggered, for
// EPOLLIN|EPOLLOUT|EPOLLRDHUP (no epoll_ctl per op). Submit first tries the
// non-blocking syscall; on EAGAIN the op joins the descriptor's read or
// write FIFO, and an edge later runs the FIFO until EAGAIN again. A
// descriptor epoll refuses (EPERM: a regular file) is marked as a file and
// its Read/Write/Close, like every Open, run on a small blocking pool that
// posts the completion and kicks the poller through the eventfd.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jadevm/jade/evpoll"
	"golang.org/x/sys/unix"
)

// Epoll is an evpoll.Backend on epoll. All methods are safe for concurrent
// use; several goroutines may even block in Wait at once.
// Its errors name it ("epoll: submit: ..."), not the package, so a log
// says which backend failed.
type Epoll struct {
	mu      sync.Mutex // guards the fields up to pool
	slots   *slotTable
	fds     map[int]*fdState
	ready   []int32 // done slots, in completion order
	closed  bool
	waiters int  // goroutines in epoll_pwait2
	kicked  bool // an internal eventfd signal is outstanding
	pool    *filePool

	epfd, efd int
	pwait2    bool // epoll_pwait2 (5.11) works; else epoll_wait with ms
	// woken coalesces Wakes. Invariant: while it is set, an eventfd write
	// of the Wake that set it is done or on its way (Wake sets it before
	// writing), so a Wake that finds it set writes nothing; only a Wait
	// that has read the eventfd clears it (handleLocked: read, then
	// Swap), and that Wait reports the wake.
	woken   atomic.Bool
	wakeMu  sync.Mutex // guards wakeOff against Close
	wakeOff bool
	pending atomic.Int64
	reason  string
	ctr     evpoll.Counters
}

var _ evpoll.Backend = (*Epoll)(nil)

// fdState is the per-descriptor registration. Queues hold slot indices.
type fdState struct {
	file   bool // epoll refused it: ops go to the pool
	rq, wq []int32
}

// Where an epoll op waits (slot.wait).
const (
	waitNone uint8 = iota
	waitRead
	waitWrite
	waitPool
)

// OpenEpoll creates an epoll backend. reason is recorded for Reason (for
// example why io_uring was not used).
func OpenEpoll(o Options, reason string) (*Epoll, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: open: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: open: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: open: epoll_ctl eventfd: %w", err)
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	b := &Epoll{slots: newSlotTable(min(n, maxSlots)), fds: make(map[int]*fdState), epfd: epfd, efd: efd}
	b.pool = newFilePool(b, o.PoolSize)
	// Probe epoll_pwait2 with a zero timeout; ENOSYS (before 5.11) means
	// epoll_wait with the timeout rounded up to whole milliseconds.
	var evs [1]unix.EpollEvent
	_, err = b.pwait2Call(evs[:], 0)
	b.pwait2 = !errors.Is(err, unix.ENOSYS)
	wait := "epoll_pwait2"
	if !b.pwait2 {
		wait = "epoll_wait(ms)"
	}
	if reason != "" {
		reason = ": " + reason
	}
	b.reason = fmt.Sprintf("epoll %s pool=%d%s", wait, b.pool.Size(), reason)
	return b, nil
}

// Name implements evpoll.Backend.
func (b *Epoll) Name() string { return "epoll" }

// Reason says how the backend waits and why epoll was chosen.
func (b *Epoll) Reason() string { return b.reason }

// Pending implements evpoll.Backend.
func (b *Epoll) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Epoll) Stats() evpoll.Stats { return b.ctr.Snapshot() }

// Submit implements evpoll.Backend. Socket ops are tried at once; file ops
// and Open go to the pool.
func (b *Epoll) Submit(op *evpoll.Op, tok evpoll.Token) (evpoll.OpID, error) {
	if op == nil || op.Kind >= evpoll.NumKinds {
		return 0, fmt.Errorf("epoll: submit: %w", evpoll.ErrInvalidOp)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, fmt.Errorf("epoll: submit: %w", evpoll.ErrClosed)
	}
	idx, s, ok := b.slots.alloc(op, tok)
	if !ok {
		return 0, fmt.Errorf("epoll: submit: %w", evpoll.ErrTooMany)
	}
	switch op.Kind {
	case evpoll.Connect:
		n, err := putSockaddr(&s.sock().sa, op.Addr)
		if err != nil {
			b.slots.release(idx)
			return 0, fmt.Errorf("epoll: submit: connect: %w", evpoll.ErrInvalidOp)
		}
		s.sock().salen = n
	case evpoll.Open:
		for i := 0; i < len(op.Path); i++ {
			if op.Path[i] == 0 {
				b.slots.release(idx)
				return 0, fmt.Errorf("epoll: submit: open: NUL in path: %w", evpoll.ErrInvalidOp)
			}
		}
	}
	id := b.slots.ID(idx)
	b.pending.Add(1)
	b.ctr.Submitted.Add(1)
	b.ctr.Ops[op.Kind].Add(1)
	s.fd = op.Fd
	switch op.Kind {
	case evpoll.Nop:
		b.completeLocked(idx, 0)
	case evpoll.Open:
		b.toPoolLocked(idx, s)
	case evpoll.Close:
		b.closeLocked(idx, s)
	default:
		b.startLocked(idx, s)
	}
	return id, nil
}

// startLocked registers the descriptor if needed and runs or queues the op.
func (b *Epoll) startLocked(idx int32, s *slot) {
	st, err := b.fdLocked(s.fd)
	if err != nil {
		b.completeLocked(idx, errRes(err))
		return
	}
	if st.file {
		b.toPoolLocked(idx, s)
		return
	}
	q, wait := &st.rq, waitRead
	if k := s.op.Kind; k == evpoll.Connect || k == evpoll.Send || k == evpoll.Write {
		q, wait = &st.wq, waitWrite
	}
	if s.op.Kind == evpoll.Connect {
		if res, done := b.connectStart(s); done {
			b.completeLocked(idx, res)
			return
		}
	} else if len(*q) == 0 { // FIFO: behind a waiting op we would only see EAGAIN
		if res, done := b.try(s); done {
			b.completeLocked(idx, res)
			return
		}
	}
	s.wait = wait
	*q = append(*q, idx)
}

// fdLocked returns the registration of fd, registering it on first use.
func (b *Epoll) fdLocked(fd int) (*fdState, error) {
	if st, ok := b.fds[fd]; ok {
		return st, nil
	}
	st := &fdState{}
	b.ctr.Syscalls.Add(1)
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(b.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		if !errors.Is(err, unix.EPERM) {
			return nil, err
		}
		st.file = true // regular files and directories cannot be polled
	}
	b.fds[fd] = st
	return st, nil
}

// closeLocked handles a Close op: it forgets the descriptor, fails the ops
// still queued on it with -ECANCELED (they could never complete), and
// closes it (on the pool for regular files).
func (b *Epoll) closeLocked(idx int32, s *slot) {
	st, ok := b.fds[s.fd]
	if ok {
		delete(b.fds, s.fd)
		if !st.file {
			b.ctr.Syscalls.Add(1)
			_ = unix.EpollCtl(b.epfd, unix.EPOLL_CTL_DEL, s.fd, nil)
		}
		for _, q := range [][]int32{st.rq, st.wq} {
			for _, w := range q {
				b.slots.At(w).cancel = true
				b.completeLocked(w, -int32(unix.ECANCELED))
			}
		}
		if st.file {
			b.toPoolLocked(idx, s)
			return
		}
	}
	b.ctr.Syscalls.Add(1)
	b.completeLocked(idx, errRes(unix.Close(s.fd)))
}

// try performs a read- or write-side op once, non-blocking. done is false
// on EAGAIN.
func (b *Epoll) try(s *slot) (res int32, done bool) {
	op := s.op
	for {
		b.ctr.Syscalls.Add(1)
		var r uintptr
		var errno unix.Errno
		p, n := bufAddr(op.Buf)
		switch op.Kind {
		case evpoll.Accept:
			sb := s.sock()
			sb.salen = unix.SizeofSockaddrAny
			r, _, errno = unix.Syscall6(unix.SYS_ACCEPT4, uintptr(s.fd), uintptr(unsafe.Pointer(&sb.sa)),
				uintptr(unsafe.Pointer(&sb.salen)), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
		case evpoll.Recv:
			r, _, errno = unix.Syscall6(unix.SYS_RECVFROM, uintptr(s.fd), uintptr(p), uintptr(n), 0, 0, 0)
		case evpoll.Send:
			r, _, errno = unix.Syscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(p), uintptr(n), unix.MSG_NOSIGNAL, 0, 0)
		case evpoll.Read:
			r, _, errno = unix.Syscall(unix.SYS_READ, uintptr(s.fd), uintptr(p), uintptr(n))
		case evpoll.Write:
			r, _, errno = unix.Syscall(unix.SYS_WRITE, uintptr(s.fd), uintptr(p), uintptr(n))
		case evpoll.Connect:
			return b.connectCheck(s)
		}
		switch errno {
		case 0:
			return int32(r), true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, false
		}
		return -int32(errno), true
	}
}

// connectStart issues connect(2) on the non-blocking socket.
func (b *Epoll) connectStart(s *slot) (int32, bool) {
	b.ctr.Syscalls.Add(1)
	sb := s.sock()
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(s.fd), uintptr(unsafe.Pointer(&sb.sa)), uintptr(sb.salen))
	switch errno {
	case 0:
		return 0, true
	case unix.EINPROGRESS, unix.EINTR, unix.EALREADY:
		return 0, false
	}
	return -int32(errno), true
}

// connectCheck runs when the connecting socket became writable: SO_ERROR
// holds the outcome; a still-unconnected socket keeps waiting.
func (b *Epoll) connectCheck(s *slot) (int32, bool) {
	v, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return errRes(err), true
	}
	switch e := unix.Errno(v); e {
	case 0:
	case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
		return 0, false
	default:
		return -int32(e), true
	}
	var sa unix.RawSockaddrAny
	l := uint32(unix.SizeofSockaddrAny)
	_, _, errno := unix.Syscall(unix.SYS_GETPEERNAME, uintptr(s.fd), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&l)))
	if errno == unix.ENOTCONN {
		return 0, false
	}
	return 0, true
}

// completeLocked records the result of slot idx and queues it for Wait.
// The slot stays taken (slotDone) until Wait returns the completion, so
// MaxInFlight also bounds undelivered completions.
func (b *Epoll) completeLocked(idx int32, res int32) {
	s := b.slots.At(idx)
	s.state, s.res, s.wait = slotDone, res, waitNone
	if s.op.Kind == evpoll.Accept && res >= 0 {
		s.op.Addr = getSockaddr(&s.sock().sa)
	}
	b.ready = append(b.ready, idx)
	b.kickLocked()
}

// kickLocked makes a goroutine blocked in epoll_pwait2 notice b.ready.
func (b *Epoll) kickLocked() {
	if b.waiters > 0 && !b.kicked {
		b.kicked = true
		b.writeEventfd()
	}
}

func (b *Epoll) writeEventfd() {
	one := eventfdOne
	unix.Syscall(unix.SYS_WRITE, uintptr(b.efd), uintptr(unsafe.Pointer(&one[0])), 8)
}

// eventfdOne is the u64 1 in host byte order, the value an eventfd write adds.
var eventfdOne = func() (b [8]byte) {
	binary.NativeEndian.PutUint64(b[:], 1)
	return b
}()

// Cancel implements evpoll.Backend. An op waiting for readiness completes
// at once with -ECANCELED; an op on the file pool cannot be interrupted and
// completes with its real result.
func (b *Epoll) Cancel(id evpoll.OpID) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("epoll: cancel: %w", evpoll.ErrClosed)
	}
	idx, s := b.slots.lookup(id)
	if s == nil {
		return fmt.Errorf("epoll: cancel: %w", evpoll.ErrNotPending)
	}
	if s.cancel || s.state == slotDone {
		return nil
	}
	s.cancel = true
	b.ctr.Cancelled.Add(1)
	if st := b.fds[s.fd]; st != nil && (s.wait == waitRead || s.wait == waitWrite) {
		q := &st.rq
		if s.wait == waitWrite {
			q = &st.wq
		}
		for i, w := range *q {
			if w == idx {
				*q = append((*q)[:i], (*q)[i+1:]...)
				break
			}
		}
		b.completeLocked(idx, -int32(unix.ECANCELED))
	}
	return nil
}

// Wait implements evpoll.Backend with epoll_pwait2 and a timespec.
func (b *Epoll) Wait(timeout time.Duration, out []evpoll.Completion) (int, error) {
	if len(out) == 0 {
		return 0, fmt.Errorf("epoll: wait: empty completion buffer: %w", evpoll.ErrInvalidOp)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	var evs [128]unix.EpollEvent
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return 0, fmt.Errorf("epoll: wait: %w", evpoll.ErrClosed)
		}
		if n := b.deliverLocked(out); n > 0 {
			b.mu.Unlock()
			return n, nil
		}
		rem := time.Duration(-1)
		switch {
		case timeout == 0:
			rem = 0
		case timeout > 0:
			if rem = time.Until(deadline); rem < 0 {
				rem = 0
			}
		}
		b.waiters++
		b.mu.Unlock()
		nev, err := b.pwait(evs[:], rem)
		b.mu.Lock()
		b.waiters--
		if err != nil && !errors.Is(err, unix.EINTR) {
			b.mu.Unlock()
			return 0, fmt.Errorf("epoll: wait: %w", err)
		}
		woke := b.handleLocked(evs[:nev])
		n := b.deliverLocked(out)
		b.mu.Unlock()
		if n > 0 || woke || rem == 0 {
			return n, nil
		}
	}
}

// deliverLocked moves ready completions into out and releases their slots.
func (b *Epoll) deliverLocked(out []evpoll.Completion) int {
	n := min(len(out), len(b.ready))
	for i, idx := range b.ready[:n] {
		s := b.slots.At(idx)
		var fl uint32
		if s.cancel && s.res == -int32(unix.ECANCELED) {
			fl = evpoll.FlagCancelled
		}
		out[i] = evpoll.Completion{Token: s.tok, Res: s.res, Flags: fl}
		b.slots.release(idx)
	}
	if n > 0 {
		b.ready = b.ready[:copy(b.ready, b.ready[n:])]
		b.pending.Add(-int64(n))
		b.ctr.Completed.Add(uint64(n))
	}
	return n
}

// handleLocked runs the queues of every descriptor that reported an edge
// and drains the eventfd. It reports whether a Wake was observed.
func (b *Epoll) handleLocked(evs []unix.EpollEvent) (woke bool) {
	for _, ev := range evs {
		fd := int(ev.Fd)
		if fd == b.efd {
			var buf [8]byte
			unix.Syscall(unix.SYS_READ, uintptr(b.efd), uintptr(unsafe.Pointer(&buf[0])), 8)
			b.kicked = false
			if b.woken.Swap(false) {
				b.ctr.WakeUps.Add(1)
				woke = true
			}
			continue
		}
		st := b.fds[fd]
		if st == nil {
			continue // closed since the event was queued
		}
		const rd = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
		const wr = unix.EPOLLOUT | unix.EPOLLHUP | unix.EPOLLERR
		if ev.Events&rd != 0 {
			b.runQueueLocked(&st.rq)
		}
		if ev.Events&wr != 0 {
			b.runQueueLocked(&st.wq)
		}
	}
	return woke
}

// runQueueLocked completes queued ops in order until one would block.
func (b *Epoll) runQueueLocked(q *[]int32) {
	k := 0
	for ; k < len(*q); k++ {
		idx := (*q)[k]
		res, done := b.try(b.slots.At(idx))
		if !done {
			break
		}
		b.completeLocked(idx, res)
	}
	if k > 0 {
		*q = (*q)[:copy(*q, (*q)[k:])] // keep the backing array
	}
}

// pwait waits for events; rem < 0 blocks without limit. It returns the
// number of events, or 0 with an error: Wait slices evs by the count even
// after EINTR, which a signal to the blocked thread causes (Go's
// preemption signal among them; epoll_wait is never restarted).
func (b *Epoll) pwait(evs []unix.EpollEvent, rem time.Duration) (int, error) {
	b.ctr.Syscalls.Add(1)
	if b.pwait2 {
		return b.pwait2Call(evs, rem)
	}
	ms := -1
	if rem >= 0 {
		ms = int((rem + time.Millisecond - 1) / time.Millisecond) // round up: never early
	}
	n, err := unix.EpollWait(b.epfd, evs, ms)
	if err != nil {
		// x/sys returns the raw result with the error: n is -1 here.
		// Passed on, it would make Wait panic on evs[:n] with b.mu held,
		// and the worker's deferred Close would wait for b.mu for ever.
		// Kernels before 5.11 and qemu-user, which lack epoll_pwait2,
		// take this path.
		return 0, err
	}
	return n, nil
}

// pwait2Call is epoll_pwait2(2): the timeout is a timespec. Syscall6 (not
// RawSyscall) lets the runtime treat the blocked thread as in a syscall.
func (b *Epoll) pwait2Call(evs []unix.EpollEvent, rem time.Duration) (int, error) {
	var r uintptr
	var errno unix.Errno
	if rem < 0 {
		r, _, errno = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(b.epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	} else {
		ts := durationTimespec(rem)
		r, _, errno = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(b.epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// Wake implements evpoll.Backend with an eventfd write (coalesced).
func (b *Epoll) Wake() error {
	if !b.woken.CompareAndSwap(false, true) {
		return nil
	}
	b.wakeMu.Lock()
	defer b.wakeMu.Unlock()
	if b.wakeOff {
		return fmt.Errorf("epoll: wake: %w", evpoll.ErrClosed)
	}
	b.ctr.Wakes.Add(1)
	b.writeEventfd()
	return nil
}

// Close implements evpoll.Backend. Pool jobs already running finish first
// (they are blocking syscalls); queued socket ops are dropped.
func (b *Epoll) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.wakeMu.Lock()
	b.wakeOff = true
	b.wakeMu.Unlock()
	if b.waiters > 0 {
		b.writeEventfd() // blocked waiters come back and see closed
	}
	// Nobody may be in epoll_pwait2 on epfd when it is closed.
	waitFor(&b.mu, func() bool { return b.waiters == 0 })
	for fd, st := range b.fds {
		if !st.file {
			_ = unix.EpollCtl(b.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		}
	}
	b.fds, b.ready = nil, nil
	b.mu.Unlock()
	b.pool.Stop()
	b.pending.Store(0)
	err := unix.Close(b.efd)
	if e := unix.Close(b.epfd); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("epoll: close: %w", err)
	}
	return nil
}

func errRes(err error) int32 {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return -int32(e)
	}
	return -int32(unix.EIO)
}
