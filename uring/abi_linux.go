//go:build linux

package uring

// Kernel ABI of io_uring, written from the uapi header
// include/uapi/linux/io_uring.h (as shipped by liburing; see
// notes/io-backend-facts.md §1). golang.org/x/sys/unix has only the three
// syscall numbers, so every constant and struct lives here, each struct
// with a size test (abi_linux_test.go).

import (
	"time"

	"github.com/jadevm/jade/internal/evpoll/slots"

	"golang.org/x/sys/unix"
)

// Syscall numbers (identical on every architecture since the unification).
const (
	sysSetup    = unix.SYS_IO_URING_SETUP
	sysEnter    = unix.SYS_IO_URING_ENTER
	sysRegister = unix.SYS_IO_URING_REGISTER
)

// mmap offsets (io_uring.h IORING_OFF_*).
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

// Setup flags (io_uring_params.flags).
const (
	setupCQSize        = 1 << 3
	setupClamp         = 1 << 4
	setupSubmitAll     = 1 << 7  // 5.18
	setupCoopTaskrun   = 1 << 8  // 5.19
	setupTaskrunFlag   = 1 << 9  // 5.19
	setupSingleIssuer  = 1 << 12 // 6.0
	setupDeferTaskrun  = 1 << 13 // 6.1
	setupFlagsReported = setupCQSize | setupClamp | setupSubmitAll | setupCoopTaskrun |
		setupTaskrunFlag | setupSingleIssuer | setupDeferTaskrun
)

// Feature flags (io_uring_params.features).
const (
	featSingleMmap = 1 << 0 // 5.4
	featNoDrop     = 1 << 1 // 5.5
	featFastPoll   = 1 << 5 // 5.7
	featExtArg     = 1 << 8 // 5.11
	featCQESkip    = 1 << 11
)

// Enter flags.
const (
	enterGetEvents = 1 << 0
	enterExtArg    = 1 << 3 // 5.11
)

// SQ ring flags (kernel-written, read with an atomic load).
const (
	sqNeedWakeup = 1 << 0
	sqCQOverflow = 1 << 1
	sqTaskrun    = 1 << 2
)

// SQE flags.
const (
	sqeCQESkipSuccess = 1 << 6
)

// Opcodes (enum io_uring_op, counted from the header).
const (
	opNop         = 0
	opPollAdd     = 6
	opAccept      = 13
	opAsyncCancel = 14
	opConnect     = 16
	opOpenat      = 18
	opClose       = 19
	opRead        = 22
	opWrite       = 23
	opSend        = 26
	opRecv        = 27
	opMsgRing     = 40
	opLast        = 64 // probe buffer size; larger than any op we use
)

// Register opcodes and op arguments.
const (
	registerProbe  = 8
	probeSupported = 1 << 0 // io_uring_probe_op.flags
	msgRingData    = 0      // IORING_MSG_DATA (MSG_RING addr)
	atFDCWD        = unix.AT_FDCWD
	noOffset       = ^uint64(0) // off = -1: use and move the file position
)

// user_data layout (this package's convention, not the kernel's): an op's
// user_data is its OpID, slot | generation<<32 with the generation in bits
// 32..62 and never zero (package evpoll/slots); bit 63 marks the backend's
// own SQEs, whose low bits say which.
const (
	internalUD = 1 << 63
	udWake     = internalUD | 1 // wake CQE (MSG_RING or the eventfd READ)
	udCancel   = internalUD | 2 // ASYNC_CANCEL results
	udKick     = internalUD | 3 // MSG_RING: owner must re-enter to submit
)

// Errnos the completion path compares with.
const (
	errnoETIME     = unix.ETIME
	errnoECANCELED = unix.ECANCELED
	// The kernel's internal restart codes (ERESTARTSYS ..
	// ERESTART_RESTARTBLOCK, include/linux/errno.h): a signal ended a
	// wait; a system call never returns them, a CQE can.
	errnoERESTARTSYS   = 512
	errnoERESTARTBLOCK = 516
)

// Backend defaults (Options).
const (
	defaultEntries = 256
	// defaultInFlight is far above the scheduler engine's own bound on ops
	// in flight (sched.DefaultMaxInFlightIO), so that bound is reached
	// first; the slot table grows lazily, so it costs nothing until used.
	defaultInFlight = 1 << 20
	maxSlots        = slots.Max
)

// sqringOffsets is struct io_sqring_offsets (40 bytes).
type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// cqringOffsets is struct io_cqring_offsets (40 bytes).
type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// params is struct io_uring_params (120 bytes). Resv must stay zero or
// setup fails with EINVAL.
type params struct {
	SQEntries    uint32
	CQEntries    uint32
	Flags        uint32
	SQThreadCPU  uint32
	SQThreadIdle uint32
	Features     uint32
	WQFd         uint32
	Resv         [3]uint32
	SQOff        sqringOffsets
	CQOff        cqringOffsets
}

// sqe is struct io_uring_sqe (64 bytes). Unions are named after the member
// this package uses; the comment lists the others.
type sqe struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64 // off / addr2 (accept: *socklen)
	Addr        uint64 // addr / splice_off_in
	Len         uint32
	OpFlags     uint32 // rw_flags, msg_flags, accept_flags, open_flags, cancel_flags, msg_ring_flags
	UserData    uint64
	BufIndex    uint16 // buf_index / buf_group
	Personality uint16
	FileIndex   uint32 // splice_fd_in / file_index / addr_len
	Addr3       uint64
	Pad2        uint64
}

// cqe is struct io_uring_cqe without CQE32 (16 bytes).
type cqe struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// getEventsArg is struct io_uring_getevents_arg (24 bytes), passed with
// IORING_ENTER_EXT_ARG; Ts points to a __kernel_timespec.
type getEventsArg struct {
	Sigmask     uint64
	SigmaskSz   uint32
	MinWaitUsec uint32
	Ts          uint64
}

// kernelTimespec is struct __kernel_timespec: 64-bit fields on every
// architecture (unix.Timespec is 32-bit on 386 and arm).
type kernelTimespec struct {
	Sec  int64
	Nsec int64
}

func durationTimespec(d time.Duration) kernelTimespec {
	return kernelTimespec{Sec: int64(d / time.Second), Nsec: int64(d % time.Second)}
}

// probeOp is struct io_uring_probe_op (8 bytes).
type probeOp struct {
	Op    uint8
	Resv  uint8
	Flags uint16
	Resv2 uint32
}

// probe is struct io_uring_probe (16-byte header) followed by opLast ops.
type probe struct {
	LastOp uint8
	OpsLen uint8
	Resv   uint16
	Resv2  [3]uint32
	Ops    [opLast]probeOp
}
