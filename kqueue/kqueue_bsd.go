//go:build darwin || freebsd

package kqueue

import (
	"errors"
	"fmt"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/readiness"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/unixsock"
	"golang.org/x/sys/unix"
)

// Poller is an evpoll.Backend on kqueue. All methods are safe for
// concurrent use; several goroutines may block in Wait at once.
type Poller struct {
	*readiness.Core // Submit, Cancel, Wait, Wake, Pending, Stats, Forget
	os              *kqueueOS
	reason          string
}

// kqueueOS is the kqueue half of the readiness core (package
// evpoll/readiness): registration, the non-blocking system calls, the
// EVFILT_USER wake event and kevent(2).
type kqueueOS struct {
	kq  int
	ctr *evpoll.Counters
}

var (
	_ evpoll.Backend = (*Poller)(nil)
	_ readiness.OS   = (*kqueueOS)(nil)
)

// wakeIdent is the ident of the EVFILT_USER event behind Wake. User
// events have their own ident space, so 0 never collides with fd 0.
const wakeIdent = 0

// maxWait bounds one kevent timeout; Wait loops until its deadline.
const maxWait = time.Hour

// Defaults of Options. defaultInFlight is far above the scheduler engine's
// own bound on ops in flight (sched.DefaultMaxInFlightIO), so that bound is
// reached first; the slot table grows lazily, so it costs nothing until
// used.
const (
	defaultInFlight = 1 << 20
	maxSlots        = slots.Max
)

// Open creates a kqueue backend.
func Open(o Options) (evpoll.Backend, error) {
	return New(o)
}

// New creates a kqueue backend and returns its concrete type.
func New(o Options) (*Poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: kqueue: %w", err)
	}
	unix.CloseOnExec(kq)
	var ch [1]unix.Kevent_t
	unix.SetKevent(&ch[0], wakeIdent, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, ch[:], nil, nil); err != nil {
		unix.Close(kq)
		return nil, fmt.Errorf("kqueue: register user event: %w", err)
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	os := &kqueueOS{kq: kq}
	core := readiness.New(readiness.Config{Name: "kqueue", PollOp: "kevent", MaxInFlight: min(n, maxSlots), PoolSize: o.PoolSize}, os)
	os.ctr = core.Counters()
	return &Poller{Core: core, os: os, reason: fmt.Sprintf("kqueue pool=%d", core.PoolSize())}, nil
}

// Name implements evpoll.Backend.
func (b *Poller) Name() string { return "kqueue" }

// Reason describes the backend's configuration, for logs.
func (b *Poller) Reason() string { return b.reason }

// Close implements evpoll.Backend. Pool jobs already running finish first
// (they are blocking system calls); queued socket ops are dropped.
// Descriptors accepted or opened for completions that were never returned
// are closed; the descriptors the ops named belong to the caller and stay
// open.
func (b *Poller) Close() error {
	if !b.Core.Close() {
		return nil
	}
	if err := unix.Close(b.os.kq); err != nil {
		return fmt.Errorf("kqueue: close: %w", err)
	}
	return nil
}

// Register implements readiness.OS. Regular files and directories
// (always "ready" to kqueue) and descriptors kqueue refuses are files,
// put in blocking mode for the pool; the others are put in non-blocking
// mode and registered for EVFILT_READ
// and EVFILT_WRITE with EV_CLEAR.
func (o *kqueueOS) Register(fd int) (file bool, err error) {
	if fd < 0 {
		return false, unix.EBADF
	}
	var stat unix.Stat_t
	o.ctr.Syscalls.Add(1)
	if err := unix.Fstat(fd, &stat); err != nil {
		return false, err
	}
	switch stat.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR:
		// Opened with O_NONBLOCK (unixsock.OpenFlags); the pool's calls
		// are meant to block.
		o.ctr.Syscalls.Add(1)
		_ = unix.SetNonblock(fd, false)
		return true, nil
	case unix.S_IFSOCK:
		unixsock.NoSigpipe(fd)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return false, err
	}
	var ch [2]unix.Kevent_t
	unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, unix.EV_ADD|unix.EV_CLEAR)
	unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, unix.EV_ADD|unix.EV_CLEAR)
	o.ctr.Syscalls.Add(1)
	if _, err := unix.Kevent(o.kq, ch[:], nil, nil); err != nil {
		if errors.Is(err, unix.EBADF) {
			return false, err
		}
		// Not pollable (some devices): undo a half registration and
		// treat it like a file. The pool makes blocking calls on a
		// non-blocking descriptor, so put it back to blocking mode.
		unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, unix.EV_DELETE)
		unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, unix.EV_DELETE)
		_, _ = unix.Kevent(o.kq, ch[:], nil, nil)
		_ = unix.SetNonblock(fd, false)
		return true, nil
	}
	return false, nil
}

// Unregister implements readiness.OS. It does nothing: closing a
// descriptor removes its kevents, and the core ignores events of a
// descriptor it has forgotten.
func (o *kqueueOS) Unregister(int) {}

// Try implements readiness.OS: the op once, non-blocking; done is false
// on EAGAIN.
func (o *kqueueOS) Try(s *readiness.Slot) (res int32, done bool) {
	op := s.Op
	buf := readiness.ClampBuf(op.Buf)
	for {
		o.ctr.Syscalls.Add(1)
		var n int
		var err error
		switch op.Kind {
		case evpoll.Accept:
			var sa unix.Sockaddr
			n, sa, err = unixsock.Accept(s.Fd)
			if err == nil {
				op.Addr = unixsock.FromSockaddr(sa)
			}
		case evpoll.Recv:
			n, err = unix.Read(s.Fd, buf)
		case evpoll.Send:
			n, err = unix.SendmsgN(s.Fd, buf, nil, nil, unixsock.SendFlags)
		case evpoll.Read:
			if op.Offset < 0 {
				n, err = unix.Read(s.Fd, buf)
			} else {
				n, err = unix.Pread(s.Fd, buf, op.Offset)
			}
		case evpoll.Write:
			if op.Offset < 0 {
				n, err = unix.Write(s.Fd, buf)
			} else {
				n, err = unix.Pwrite(s.Fd, buf, op.Offset)
			}
		case evpoll.Connect:
			return o.connectCheck(s)
		default:
			return -int32(unix.EINVAL), true
		}
		switch {
		case err == nil:
			return int32(n), true
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return 0, false
		}
		return readiness.ErrRes(err), true
	}
}

// ConnectStart implements readiness.OS: connect(2) on the non-blocking
// socket.
func (o *kqueueOS) ConnectStart(s *readiness.Slot) (int32, bool) {
	sa, err := unixsock.ToSockaddr(s.Op.Addr)
	if err != nil {
		return -int32(unix.EINVAL), true
	}
	o.ctr.Syscalls.Add(1)
	err = unix.Connect(s.Fd, sa)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, unix.EINPROGRESS), errors.Is(err, unix.EINTR), errors.Is(err, unix.EALREADY):
		return 0, false // EINTR: the connection goes on asynchronously
	}
	return readiness.ErrRes(err), true
}

// connectCheck runs when the connecting socket became writable: SO_ERROR
// holds the outcome; a still-unconnected socket keeps waiting.
func (o *kqueueOS) connectCheck(s *readiness.Slot) (int32, bool) {
	o.ctr.Syscalls.Add(1)
	if res, done := readiness.SoError(s.Fd); !done || res < 0 {
		return res, done
	}
	o.ctr.Syscalls.Add(1)
	if _, err := unix.Getpeername(s.Fd); errors.Is(err, unix.ENOTCONN) {
		return 0, false
	}
	return 0, true
}

// Kick implements readiness.OS by firing the user event. Its error is
// ignored: it can only fail when the kqueue is gone, and then nobody
// waits on it.
func (o *kqueueOS) Kick() {
	var ch [1]unix.Kevent_t
	unix.SetKevent(&ch[0], wakeIdent, unix.EVFILT_USER, 0)
	ch[0].Fflags = unix.NOTE_TRIGGER
	o.ctr.Syscalls.Add(1)
	_, _ = unix.Kevent(o.kq, ch[:], nil, nil)
}

// Drain implements readiness.OS. It does nothing: the user event has
// EV_CLEAR, so reporting it resets it.
func (o *kqueueOS) Drain() {}

// Poll implements readiness.OS with kevent(2), the timeout a timespec
// (rem < 0 blocks without limit), and turns the kevents into readiness
// events. On an error it returns 0 events: x/sys's Kevent returns -1 with
// EINTR, and the core slices by the count.
func (o *kqueueOS) Poll(evs []readiness.Event, rem time.Duration) (int, error) {
	var raw [128]unix.Kevent_t
	var ts *unix.Timespec
	if rem >= 0 {
		t := unix.NsecToTimespec(int64(min(rem, maxWait)))
		ts = &t
	}
	o.ctr.Syscalls.Add(1)
	n, err := unix.Kevent(o.kq, nil, raw[:min(len(evs), len(raw))], ts)
	if err != nil {
		return 0, err
	}
	for i := range raw[:n] {
		ev := &raw[i]
		e := readiness.Event{Fd: int32(ev.Ident)}
		switch ev.Filter {
		case unix.EVFILT_USER:
			e.Flags = readiness.EvWake
		case unix.EVFILT_READ:
			e.Flags = readiness.EvRead
		case unix.EVFILT_WRITE:
			e.Flags = readiness.EvWrite
		}
		evs[i] = e
	}
	return n, nil
}
