package bus

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/jadevm/jade/internal/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Graceful drain of a server (Runtime.Close, SIGTERM in `jade run`).
//
// A drain first stops listening: StopListening closes every listening
// socket a task opened with net.listen, so the kernel refuses new
// connections at once (no handshake completes into a backlog nobody will
// accept from). The connections whose handshake the kernel has already
// completed, waiting in the listener's accept queue, are not reset with
// it: StopListening first takes them (non-blocking accepts until EAGAIN)
// and keeps them for the listener, and the next net.accepts on the closed
// listener return them, one each, as if it were still open. Once none is
// left, a net.accept waiting on such a listener, and every later
// net.accept or net.listen, throws a catchable ShutdownError: the program
// learns that it should stop accepting, finishes the connections it has,
// and ends. A handshake that completes between the last of those accepts
// and the close is reset, as every one was before; connections nobody
// accepted by the end of the drain are closed by Shutdown. The closes go
// through the scheduler's descriptor protocol (sched/fd.go): an accept in
// flight is cancelled and the number is freed only when its completion
// is reaped, so no number is reused under it (an accept that won that
// race returns its connection). Connections, files and outgoing connects
// are not touched. IOCP has no non-blocking accept (AcceptNow): there the
// queue is reset with the listener.

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
	// queued holds, per listener StopListening closed, the connections
	// it took from that listener's accept queue and no net.accept has
	// returned yet, oldest first; each an FD without owner until an
	// accept passes it to its task. Guarded by mu; nil once Shutdown
	// closed what was left.
	queued map[*sched.FD][]*sched.FD
}

// maxQueued bounds the connections StopListening takes from one listener:
// the kernel's accept queue holds at most somaxconn (4,096 by default on
// Linux), and a flood of new handshakes racing the takes cannot keep it
// accepting.
const maxQueued = 1 << 16

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
// by net.listen and makes later net.listen calls fail. The connections
// waiting in a listener's accept queue are taken first and returned by
// the next net.accepts on it; after them, a waiting and every later
// net.accept on those listeners throws ShutdownError. Connections
// already accepted are untouched. It returns how many listeners it
// closed. Idempotent; safe from any goroutine.
func (b *Bus) StopListening() int {
	l := &b.listeners
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return 0
	}
	l.stopped = true
	// Every task waiting on the drain channel learns of the drain now
	// (its receive ends with ClosedError, its select case fires).
	_ = b.drain.Close(nil)
	l.shut = make(map[*sched.FD]struct{}, len(l.open))
	l.queued = make(map[*sched.FD][]*sched.FD)
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
		// Until CloseFD marks f closing, accepts on it go on as usual;
		// after it, they find the queue stored here.
		if q := b.takeQueue(f); len(q) > 0 {
			l.mu.Lock()
			if l.queued != nil {
				l.queued[f] = q
				q = nil
			}
			l.mu.Unlock()
			closeAll(b.ctl, q) // Shutdown ran meanwhile
		}
		b.ctl.CloseFD(f)
	}
	return len(fds)
}

// takeQueue accepts, without blocking, the connections waiting in
// listener f's accept queue, and returns them as FDs without owner. It
// stops at the first EAGAIN (the queue is empty) or other failure (an
// accept in flight on a worker may take some of them: it returns them to
// its task).
func (b *Bus) takeQueue(f *sched.FD) []*sched.FD {
	var q []*sched.FD
	_ = b.ctl.UseFD(f, func(num int) error {
		for len(q) < maxQueued {
			nfd, err := iosys.AcceptNow(num)
			if errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EINTR) {
				continue // reset in the queue: the next one
			}
			if err != nil {
				return nil
			}
			iosys.Accepted(nfd)
			q = append(q, b.ctl.NewFD(nil, nfd))
		}
		return nil
	})
	return q
}

// drainedAccept ends a net.accept of t on listener f, which a drain
// closed: it returns the oldest connection StopListening took from f's
// accept queue, now owned by t, or throws ShutdownError (why says how the
// accept learnt of the close) once none is left.
func (b *Bus) drainedAccept(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request, f *sched.FD, why string) sched.Action {
	l := &b.listeners
	l.mu.Lock()
	var c *sched.FD
	if q := l.queued[f]; len(q) > 0 {
		c, q[0] = q[0], nil
		if q = q[1:]; len(q) == 0 {
			delete(l.queued, f)
		} else {
			l.queued[f] = q
		}
	}
	l.mu.Unlock()
	if c == nil {
		return raise(ex, shutdownErr(req, why))
	}
	b.ctl.PassFD(t, c)
	return complete(ex, newHandle("conn", c), sched.ActContinue)
}

// closeQueued closes the connections StopListening took from accept
// queues that no net.accept returned (Shutdown: nobody will), and makes a
// StopListening still taking close what it takes.
func (l *listeners) closeQueued(ctl *sched.Control) {
	l.mu.Lock()
	qs := l.queued
	l.queued = nil
	l.mu.Unlock()
	for _, q := range qs {
		closeAll(ctl, q)
	}
}

func closeAll(ctl *sched.Control, fds []*sched.FD) {
	for _, f := range fds {
		ctl.CloseFD(f)
	}
}

// listening reports whether StopListening has not run yet.
func (b *Bus) listening() bool {
	b.listeners.mu.Lock()
	defer b.listeners.mu.Unlock()
	return !b.listeners.stopped
}

// shutdownErr is the error of a listen or accept refused by a drain.
func shutdownErr(req *vmloop.Request, what string) vmloop.Value {
	return vmloop.Err(vmloop.ErrKindShutdown, fmt.Sprintf("%s: the runtime is draining: %s; finish the connections in hand and end", req.Intr.Name, what))
}
