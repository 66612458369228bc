package evpoll

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Token is the scheduler's wake token id. It is opaque to every backend:
// a backend stores it beside the op and hands it back in the op's
// completion, nothing more.
type Token uint64

// OpID names one submitted op for Cancel. It is slot | generation<<32 in
// both Linux backends; zero is never a valid OpID.
type OpID uint64

// Kind is the operation an [Op] asks for.
type Kind uint8

// Operation kinds. Socket kinds take a connected or listening socket; file
// kinds take a file descriptor from an Open completion.
const (
	// Nop completes at once with Res 0. It exists for tests and for
	// draining a backend.
	Nop Kind = iota
	// Accept takes a listening socket in Fd. Res is the new connection's
	// descriptor (close-on-exec; non-blocking on backends that need it),
	// and Op.Addr is set to the peer address.
	Accept
	// Connect connects the stream socket Fd to Op.Addr. Res is 0.
	Connect
	// Recv reads at most len(Buf) bytes from socket Fd. Res 0 is EOF.
	Recv
	// Send writes at most len(Buf) bytes to socket Fd (MSG_NOSIGNAL: a
	// broken pipe is -EPIPE, never a signal). A short send is possible.
	Send
	// Read reads into Buf from file (or pipe) Fd at Offset; Offset -1 reads
	// at the current file position (and is what streams need).
	Read
	// Write writes Buf to Fd at Offset; Offset -1 writes at the current
	// position.
	Write
	// Open opens Path with OpenFlags and Mode. Res is the descriptor
	// (always close-on-exec).
	Open
	// Close closes Fd. Use it for every descriptor a backend has seen, so
	// that the backend can forget its per-descriptor state first.
	Close
	// Poll waits until socket Fd is readable (bytes, a connection to
	// accept, the peer's end of stream, or an error), consuming nothing.
	// Res is the poll(2) event mask (POLLIN, POLLHUP, POLLERR, ...). The
	// backend only reads a Poll op: the same Op may be submitted again
	// while an earlier submission of it is in flight. The IOCP backend
	// refuses it (ErrInvalidOp).
	Poll

	// NumKinds is the number of kinds; Stats.Ops is indexed by Kind.
	NumKinds
)

var kindNames = [NumKinds]string{"nop", "accept", "connect", "recv", "send", "read", "write", "open", "close", "poll"}

// String returns the lower-case name of k.
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "kind(" + itoa(uint64(k)) + ")"
}

// OpenFlag is a portable open(2) flag set; backends map it to the OS bits.
type OpenFlag uint32

// Open flags. Exactly one of ReadOnly, WriteOnly and ReadWrite (ReadOnly is
// zero) may be combined with any of the others.
const (
	ReadOnly  OpenFlag = 0
	WriteOnly OpenFlag = 1 << 0
	ReadWrite OpenFlag = 1 << 1
	Create    OpenFlag = 1 << 2
	Truncate  OpenFlag = 1 << 3
	Append    OpenFlag = 1 << 4
	Exclusive OpenFlag = 1 << 5
)

// Op describes one I/O request. The fields a kind does not use are
// ignored. After Submit the Op and everything it references belong to the
// backend until the op's final completion (see the package doc).
type Op struct {
	Kind Kind
	// Fd is the descriptor the op works on (the listening socket for
	// Accept). Unused by Open and Nop.
	Fd int
	// Buf is the data buffer of Recv, Send, Read and Write.
	Buf []byte
	// Offset is the file offset of Read and Write; -1 means the current
	// position. Streams (sockets, pipes) need -1.
	Offset int64
	// Addr is the remote address of Connect; after an Accept completes
	// successfully it holds the peer's address.
	Addr netip.AddrPort
	// Path, OpenFlags and Mode are Open's arguments.
	Path      string
	OpenFlags OpenFlag
	Mode      uint32
}

// Completion is the final result of one op.
type Completion struct {
	// Token is the token passed to Submit.
	Token Token
	// Res is the syscall's result: bytes, a descriptor, 0, or -errno.
	Res int32
	// Flags holds Flag* bits.
	Flags uint32
}

// Completion flags.
const (
	// FlagCancelled is set when the op ended because of Cancel (or because
	// its descriptor was closed by a Close op on a backend that must fail
	// waiters then). Res is -ECANCELED in that case.
	FlagCancelled uint32 = 1 << 0
)

// Err returns nil for Res >= 0 and the errno for a negative Res.
func (c Completion) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return syscall.Errno(-c.Res)
}

// Cancelled reports whether the op ended because it was cancelled.
func (c Completion) Cancelled() bool { return c.Flags&FlagCancelled != 0 }

// Stats are cumulative counters of one backend. Every field is a count
// since the backend was opened.
type Stats struct {
	Submitted uint64 // ops accepted by Submit
	Completed uint64 // final completions returned by Wait
	Cancelled uint64 // Cancel calls that found the op pending
	Wakes     uint64 // Wake calls that had to signal (coalesced ones excluded)
	WakeUps   uint64 // Wait returns caused by a Wake
	Syscalls  uint64 // system calls made for ops and waits (io_uring: io_uring_enter only)
	Stale     uint64 // completions dropped because their slot had moved on
	Overflows uint64 // times the kernel CQ overflowed and was flushed (io_uring)
	Kernel    uint64 // ops executed by the kernel ring (io_uring SQEs for ops)
	Pool      uint64 // ops run on the blocking file pool (epoll)
	Ops       [NumKinds]uint64
}

// Add adds o's counters to s (the sum over several backends, e.g. one per
// worker).
func (s *Stats) Add(o Stats) {
	s.Submitted += o.Submitted
	s.Completed += o.Completed
	s.Cancelled += o.Cancelled
	s.Wakes += o.Wakes
	s.WakeUps += o.WakeUps
	s.Syscalls += o.Syscalls
	s.Stale += o.Stale
	s.Overflows += o.Overflows
	s.Kernel += o.Kernel
	s.Pool += o.Pool
	for k := range s.Ops {
		s.Ops[k] += o.Ops[k]
	}
}

// Backend is one completion backend instance (one ring, one epoll set).
type Backend interface {
	// Name is the backend kind: "io_uring", "epoll", "kqueue" or "iocp".
	Name() string
	// Submit starts op for tok. It fails only synchronously (closed backend,
	// invalid op, in-flight limit); every other failure is a completion.
	Submit(op *Op, tok Token) (OpID, error)
	// Cancel asks the op to end early; see the package doc.
	Cancel(id OpID) error
	// Wait returns final completions into out. It blocks until at least one
	// completion is ready, Wake is called, or timeout passes; timeout < 0
	// blocks without limit and 0 only polls. A timeout returns (0, nil). The
	// timeout has the precision of a timespec, not of milliseconds.
	Wait(timeout time.Duration, out []Completion) (int, error)
	// Wake makes one blocked Wait (or the next Wait) return, from any
	// goroutine. Wakes are coalesced until a Wait observes them.
	Wake() error
	// Pending counts submitted ops whose final completion Wait has not yet
	// returned.
	Pending() int
	// Stats returns a snapshot of the counters.
	Stats() Stats
	// Close cancels what is pending, waits for the kernel to let go of the
	// ops' memory, and releases the backend. Completions not yet returned
	// are discarded.
	Close() error
}

// Errors returned by backends (wrapped with "pkg: op:" context).
var (
	ErrClosed     = errors.New("evpoll: backend closed")
	ErrTooMany    = errors.New("evpoll: too many ops in flight")
	ErrNotPending = errors.New("evpoll: op not pending")
	ErrInvalidOp  = errors.New("evpoll: invalid op")
)

// ErrNotSupportedOnOS is wrapped by the Open of a backend package built for
// a system the backend does not run on (uring off Linux, kqueue off darwin
// and freebsd, iocp off Windows): "kqueue: open: unsupported operation on
// linux". It wraps errors.ErrUnsupported.
var ErrNotSupportedOnOS = fmt.Errorf("%w on %s", errors.ErrUnsupported, runtime.GOOS)

// CheckOp returns the reason a backend's Submit refuses op before taking
// a slot, or nil: a nil op or an unknown kind, a Connect whose Addr is not
// a valid address, an Open whose Path holds a NUL byte. The error wraps
// [ErrInvalidOp]; a backend prefixes it with "name: submit: ".
func CheckOp(op *Op) error {
	if op == nil || op.Kind >= NumKinds {
		return ErrInvalidOp
	}
	switch op.Kind {
	case Connect:
		if !op.Addr.Addr().IsValid() {
			return invalidOp("connect: " + ErrInvalidOp.Error() + ": invalid address " + op.Addr.String())
		}
	case Open:
		if strings.IndexByte(op.Path, 0) >= 0 {
			return invalidOp("open: NUL in path: " + ErrInvalidOp.Error())
		}
	}
	return nil
}

// invalidOp is a CheckOp error: its text, wrapping ErrInvalidOp.
type invalidOp string

func (e invalidOp) Error() string { return string(e) }
func (e invalidOp) Unwrap() error { return ErrInvalidOp }

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

// String formats s as "submitted=… completed=… ops{recv=…}" for logs.
func (s Stats) String() string {
	var sb strings.Builder
	add := func(name string, v uint64) {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(name)
		sb.WriteByte('=')
		sb.WriteString(itoa(v))
	}
	add("submitted", s.Submitted)
	add("completed", s.Completed)
	add("cancelled", s.Cancelled)
	add("wakes", s.Wakes)
	add("wakeups", s.WakeUps)
	add("syscalls", s.Syscalls)
	add("stale", s.Stale)
	add("overflows", s.Overflows)
	add("kernel", s.Kernel)
	add("pool", s.Pool)
	for k := Kind(0); k < NumKinds; k++ {
		if s.Ops[k] != 0 {
			add(k.String(), s.Ops[k])
		}
	}
	return sb.String()
}

// Counters is the lock-free counter set behind [Stats], shared by the
// backends: the owner adds, any goroutine snapshots.
type Counters struct {
	Submitted, Completed, Cancelled, Wakes, WakeUps atomic.Uint64
	Syscalls, Stale, Overflows, Kernel, Pool        atomic.Uint64
	Ops                                             [NumKinds]atomic.Uint64
}

// Snapshot returns the current values. Fields are read one by one, so a
// snapshot taken while ops run is not a single instant.
func (c *Counters) Snapshot() Stats {
	s := Stats{
		Submitted: c.Submitted.Load(),
		Completed: c.Completed.Load(),
		Cancelled: c.Cancelled.Load(),
		Wakes:     c.Wakes.Load(),
		WakeUps:   c.WakeUps.Load(),
		Syscalls:  c.Syscalls.Load(),
		Stale:     c.Stale.Load(),
		Overflows: c.Overflows.Load(),
		Kernel:    c.Kernel.Load(),
		Pool:      c.Pool.Load(),
	}
	for i := range c.Ops {
		s.Ops[i] = c.Ops[i].Load()
	}
	return s
}
