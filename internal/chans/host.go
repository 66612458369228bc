package chans

import (
	"errors"
	"sync"
)

// hostWaiter is a host goroutine's side of a wait: Wake and the end of
// the wait by its context are decided under its mutex, once.
type hostWaiter struct {
	mu    sync.Mutex
	state uint8 // 0 waiting, 1 woken, 2 gave up; guarded by mu
	r     Result
	done  chan struct{}
}

func (h *hostWaiter) Live() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state == 0
}

func (h *hostWaiter) Wake(r Result) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != 0 {
		return false
	}
	h.state, h.r = 1, r
	close(h.done)
	return true
}

// wait waits for a Wake or for done (a context's); ok false: the wait
// gave up and nothing passed.
func (h *hostWaiter) wait(done <-chan struct{}) (Result, bool) {
	select {
	case <-h.done:
		return h.r, true
	case <-done:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == 1 { // a Wake won the race with the context
		return h.r, true
	}
	h.state = 2
	return Result{}, false
}

// SendHost is Send for a host goroutine: it waits while the channel is
// full until done is closed. It returns nil when m was sent, ErrClosed
// when the channel was or became closed first, or errGaveUp when done
// ended the wait (m not sent).
func (c *Chan) SendHost(m *Msg, done <-chan struct{}) error {
	var h *hostWaiter
	sent, err := c.Send(m, func() Waiter { h = &hostWaiter{done: make(chan struct{})}; return h }, nil)
	switch {
	case err != nil:
		return err
	case sent:
		return nil
	}
	r, ok := h.wait(done)
	switch {
	case !ok:
		return ErrGaveUp
	case r.Closed:
		return ErrClosed
	}
	return nil
}

// RecvHost is Recv for a host goroutine: it waits while the channel is
// empty until done is closed (ErrGaveUp: nothing was taken). The caller
// owns the message and must Release it.
func (c *Chan) RecvHost(done <-chan struct{}) (*Msg, error) {
	var h *hostWaiter
	m, err := c.Recv(func() Waiter { h = &hostWaiter{done: make(chan struct{})}; return h }, nil)
	switch {
	case err != nil:
		return nil, err
	case m != nil:
		return m, nil
	}
	r, ok := h.wait(done)
	switch {
	case !ok:
		return nil, ErrGaveUp
	case r.Closed:
		return nil, ErrClosed
	}
	return r.Msg, nil
}

// ErrGaveUp is returned by SendHost and RecvHost when the wait ended by
// its done channel: nothing passed.
var ErrGaveUp = errors.New("wait ended before the channel was ready")
