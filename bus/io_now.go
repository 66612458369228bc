package bus

import (
	"github.com/jadevm/jade/internal/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The fast paths of net.accept and net.write: where the operation can be
// done now, it is done by a non-blocking syscall on the worker, as Go's
// netpoller does, and the task goes on in its slice; only what would
// block is submitted to the completion backend. Reads are submitted,
// except the first after a select's sel.readable case fired for the
// connection (recvNow): a connection task reads when it has answered the
// last request, and the next one has seldom arrived yet.

// acceptNow takes a connection that is already waiting on listener h
// without suspending t, as Go's netpoller does: an accept loop then takes
// a backlog within one slice. Waiting for each accept's completion would
// put the loop behind every runnable connection task once per connection,
// so that a burst of N new connections waited O(N²) task runs for their
// first reply (the http_c400 scenario of `jade perf`; figures in
// docs/PERFORMANCE.md, "I/O and servers"). ok is
// false when none is waiting, or on any error, which the submitted accept
// then reports through the backend as usual.
func (b *Bus) acceptNow(t *sched.Task, ex *vmloop.Exec, h *ioHandle) (sched.Action, bool) {
	nfd := -1
	if err := b.ctl.UseFD(h.fd, func(num int) (err error) {
		nfd, err = iosys.AcceptNow(num)
		return err
	}); err != nil {
		return 0, false
	}
	iosys.Accepted(nfd)
	return complete(ex, newHandle("conn", b.ctl.NewFD(t, nfd)), sched.ActContinue), true
}

// sendNowMax bounds the bytes one inline send copies: the worker holds its
// P through the syscall (a GC stop waits for it), and a larger write's
// rest goes to the backend.
const sendNowMax = 256 << 10

// sendNow sends what of p conn h's socket takes now, without
// suspending, and returns how much that was (0 when it takes nothing or
// fails: the send then submitted reports the error). Waiting for the
// completion of a send that the kernel takes at once costs a suspend, a
// reap and a dispatch per reply (the http scenario at 400 connections:
// about a tenth of the server's CPU).
func (b *Bus) sendNow(h *ioHandle, p []byte) int {
	if len(p) > sendNowMax {
		p = p[:sendNowMax]
	}
	sent := 0
	if err := b.ctl.UseFD(h.fd, func(num int) (err error) {
		sent, err = iosys.SendNow(num, p)
		return err
	}); err != nil {
		return 0
	}
	return sent
}

// recvNow reads what conn h holds now into p without suspending, after a
// select found it readable; ok is false when nothing is there or on any
// error, which the submitted read then reports through the backend as
// usual. Bytes it read are the read's result: nothing is lost.
func (b *Bus) recvNow(h *ioHandle, p []byte) (n int, ok bool) {
	if err := b.ctl.UseFD(h.fd, func(num int) (err error) {
		n, err = iosys.RecvNow(num, p)
		return err
	}); err != nil {
		return 0, false
	}
	return n, true
}
