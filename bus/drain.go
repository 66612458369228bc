package bus

import (
	"fmt"
	"sync"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Graceful drain of a server (Runtime.Close, SIGTERM in `jade run`).
//
// A drain first stops listening: StopListening closes every listening
// socket a task opened with net.listen, so the kernel refuses new
// connections at once (no handshake completes into a backlog nobody will
// accept from). A net.accept waiting on such a listener, and every later
// net.accept or net.listen, throws a catchable ShutdownError: the program
// learns that it should stop accepting, finishes the connections it has,
// and ends. The closes go through the scheduler's descriptor protocol
// (sched/fd.go): an accept in flight is cancelled and the number is freed
// only when its completion is reaped, so no number is reused under it.
// Connections, files and outgoing connects are not touched.

// listeners tracks the listening sockets of every engine, for
// StopListening.
type listeners struct {
	mu sync.Mutex
	// open holds each listener made by net.listen until it is seen
	// closing; guarded by mu. Pruned when it has doubled since the last
	// prune, so a program that opens and closes listeners keeps it small.
	open  map[*sched.FD]struct{}
	prune int // size at which the next prune runs; guarded by mu
	// stopped: StopListening ran; guarded by mu, never cleared. A
	// listener closed by it stays in shut.
	stopped bool
	shut    map[*sched.FD]struct{} // guarded by mu
}

// add records a new listener; false when listening has stopped (the
// caller closes fd and throws ShutdownError).
func (l *listeners) add(fd *sched.FD) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	if l.open == nil {
		l.open = map[*sched.FD]struct{}{}
	}
	if len(l.open) >= l.prune {
		for f := range l.open {
			if f.Closing() {
				delete(l.open, f)
			}
		}
		l.prune = max(16, 2*len(l.open))
	}
	l.open[fd] = struct{}{}
	return true
}

// closedByDrain reports whether fd is a listener StopListening closed.
func (l *listeners) closedByDrain(fd *sched.FD) bool {
	if fd == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.shut[fd]
	return ok
}

// StopListening begins a drain: it closes every listening socket opened
// by net.listen and makes later net.listen calls fail. A waiting and every
// later net.accept on those listeners throws ShutdownError; connections
// already accepted are untouched. It returns how many listeners it closed.
// Idempotent; safe from any goroutine.
func (b *Bus) StopListening() int {
	l := &b.listeners
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return 0
	}
	l.stopped = true
	l.shut = make(map[*sched.FD]struct{}, len(l.open))
	var fds []*sched.FD
	for f := range l.open {
		if !f.Closing() {
			l.shut[f] = struct{}{}
			fds = append(fds, f)
		}
	}
	l.open = nil
	l.mu.Unlock()
	for _, f := range fds {
		b.ctl.CloseFD(f)
	}
	return len(fds)
}

// Listening reports whether StopListening has not run yet.
func (b *Bus) Listening() bool {
	b.listeners.mu.Lock()
	defer b.listeners.mu.Unlock()
	return !b.listeners.stopped
}

// shutdownErr is the error of a listen or accept refused by a drain.
func shutdownErr(req *vmloop.Request, what string) vmloop.Value {
	return vmloop.Err(vmloop.ErrKindShutdown, fmt.Sprintf("%s: the runtime is draining: %s; finish the connections in hand and end", req.Intr.Name, what))
}
