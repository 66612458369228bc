//go:build windows

package iocp

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/evpoll/slots"
	"github.com/jadevm/jade/internal/evpoll/winsock"
	"golang.org/x/sys/windows"
)

// Port is an evpoll.Backend on an I/O completion port. All methods are
// safe for concurrent use; several goroutines may block in Wait at once.
type Port struct {
	g        slots.Gate // g.Mu guards g's state and the fields up to pool; g.Wake.Mu also gone and inbox
	slots    *slotTable
	fds      map[windows.Handle]*fdState
	ready    []int32 // done slots, in completion order
	kicked   bool    // an internal kick packet is outstanding
	inKernel int     // ops whose completion packet is still owed
	pool     *openPool

	port    windows.Handle
	gone    bool              // the port handle is being closed: forward nothing more; guarded by g.Wake.Mu
	inbox   []overlappedEntry // packets of this port's ops dequeued by another Port (share_windows.go); guarded by g.Wake.Mu
	pending atomic.Int64
	reason  string
	ctr     evpoll.Counters
}

var _ evpoll.Backend = (*Port)(nil)

// fdState is what the backend knows of one handle associated with the
// port (an association lasts as long as the handle).
type fdState struct {
	kind    uint8       // fdOther, fdSocket, fdFile
	closed  bool        // a Close op closed the handle
	append  bool        // opened with evpoll.Append: Offset -1 writes go to the end
	family  int32       // a listener's address family, learnt at its first Accept
	ops     []int32     // slots with an overlapped call in the kernel on this handle
	hi      *handleInfo // what every Port shares of the handle: its home port, its file position
	posBusy bool        // an Offset -1 op of this port holds the position
	posq    []int32     // Offset -1 ops waiting for the position, in order
	running bool        // runPosQueueLocked is active (no recursion)
}

// Handle kinds.
const (
	fdOther  uint8 = iota // pipe, character device, or not yet known
	fdSocket              // ops went through Winsock
	fdFile                // FILE_TYPE_DISK: overlapped offsets, tracked position
)

// Completion keys. Handles are associated with keyIO; the packets posted
// with PostQueuedCompletionStatus carry the others and no OVERLAPPED.
const (
	keyIO uintptr = iota
	keyWake
	keyKick
	keyForward // the inbox has packets forwarded by another Port
)

// appendOffset in both OVERLAPPED offset words writes at the end of file.
const appendOffset = 0xFFFFFFFF

// errCanceled is the Res of a cancelled op: -ECANCELED with Go's Windows
// errno for ECANCELED (syscall.ECANCELED), so Completion.Err matches it.
const errCanceled = -int32(syscall.ECANCELED)

// graveyard keeps the slot tables of closed ports whose kernel ops did not
// all come back within Close's grace period: the kernel may still write
// into their OVERLAPPED blocks and buffers, so they must never be freed.
var graveyard struct {
	sync.Mutex
	tables []*slotTable
}

// Open creates an IOCP backend.
func Open(o Options) (evpoll.Backend, error) {
	return New(o)
}

// New creates an IOCP backend and returns its concrete type.
func New(o Options) (*Port, error) {
	if err := winsock.Init(); err != nil {
		return nil, fmt.Errorf("iocp: wsastartup: %w", err)
	}
	if err := procGetQueuedCompletionStatusEx.Find(); err != nil {
		return nil, fmt.Errorf("iocp: GetQueuedCompletionStatusEx: %w", err)
	}
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("iocp: CreateIoCompletionPort: %w", err)
	}
	n := o.MaxInFlight
	if n <= 0 {
		n = defaultInFlight
	}
	n = min(n, maxSlots)
	b := &Port{fds: make(map[windows.Handle]*fdState), port: port}
	b.slots = newSlotTable(n, b)
	b.pool = newOpenPool(b, o.PoolSize)
	b.reason = fmt.Sprintf("iocp GetQueuedCompletionStatusEx(ms) pool=%d", b.pool.Size())
	return b, nil
}

// Name implements evpoll.Backend.
func (b *Port) Name() string { return "iocp" }

// Reason describes the backend's configuration, for logs.
func (b *Port) Reason() string { return b.reason }

// Pending implements evpoll.Backend.
func (b *Port) Pending() int { return int(b.pending.Load()) }

// Stats implements evpoll.Backend.
func (b *Port) Stats() evpoll.Stats { return b.ctr.Snapshot() }

// closeGrace bounds how long Close waits for cancelled ops' packets.
const closeGrace = 2 * time.Second

// Close implements evpoll.Backend. It cancels every op in the kernel
// (CancelIoEx) and dequeues packets until the kernel has returned them
// all, so no OVERLAPPED or buffer is dropped while the kernel may still
// write it; what does not come back within two seconds stays referenced
// for the life of the process. Handles accepted or opened for completions
// that were never returned are closed; the handles the ops named belong to
// the caller and stay open.
func (b *Port) Close() error {
	b.g.Mu.Lock()
	// Nobody may wait on the port when it is closed.
	if !slots.BeginClose((*waiter)(b)) {
		b.g.Mu.Unlock()
		return nil
	}
	for i := range int32(b.slots.Len()) {
		if s := b.slots.At(i); s.state == slotKernel {
			_ = windows.CancelIoEx(s.h, &s.io.ov)
		}
	}
	var ents [64]overlappedEntry
	for deadline := time.Now().Add(closeGrace); b.inKernel > 0 && time.Now().Before(deadline); {
		n, err := getQueuedCompletionStatusEx(b.port, ents[:], 50)
		if err != nil {
			break
		}
		b.handleLocked(ents[:n])
	}
	for _, idx := range b.ready {
		s := b.slots.At(idx)
		if k := s.op.Kind; (k == evpoll.Accept || k == evpoll.Open) && s.res >= 0 {
			h := windows.Handle(uintptr(s.res))
			if k == evpoll.Accept {
				_ = windows.Closesocket(h)
			} else {
				_ = windows.CloseHandle(h)
			}
		}
	}
	b.unregisterAllLocked()
	if b.inKernel > 0 {
		graveyard.Lock()
		graveyard.tables = append(graveyard.tables, b.slots)
		graveyard.Unlock()
	}
	b.fds, b.ready = nil, nil
	b.g.Mu.Unlock()
	b.pool.Stop()
	b.pending.Store(0)
	b.g.Wake.Mu.Lock()
	b.gone, b.inbox = true, nil // forward posts nothing to a closed handle
	b.g.Wake.Mu.Unlock()
	if err := windows.CloseHandle(b.port); err != nil {
		return fmt.Errorf("iocp: close: %w", err)
	}
	return nil
}
