package chans

// Send offers m. It returns sent true when m was handed to a waiting
// receiver or buffered; otherwise, when wait is non-nil, it calls wait
// (under the mutex) for the sender's Waiter, parks it with m and returns
// sent false: that Waiter is woken with Result{} once a receiver takes m,
// or Result{Closed: true} when the channel closes first. With wait nil
// (try_send) a full channel returns false and m stays the caller's. On a
// closed channel it returns ErrClosed and m stays the caller's.
func (c *Chan) Send(m *Msg, wait func() Waiter, by any) (sent bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	if st.closed {
		return false, ErrClosed
	}
	if c.handToReceiver(m, by) {
		return true, nil
	}
	if int64(st.buf.len()) < c.cap {
		st.hold(m)
		m.sent = true
		st.buf.push(m)
		return true, nil
	}
	if wait == nil {
		return false, nil
	}
	st.hold(m)
	st.sendq.push(sender{wait(), m}, senderLive, st.dropSender)
	return false, nil
}

// handToReceiver gives m to the first parked receiver whose wait is
// live. Mutex held.
func (c *Chan) handToReceiver(m *Msg, by any) bool {
	st := c.st
	for {
		w, ok := st.recvq.pop()
		if !ok {
			return false
		}
		st.unhold(m)
		was := m.sent // true for a Requeue
		m.sent = true // before the wake: once it wins, the receiver may run
		if w.Wake(Result{Msg: m, Chan: c, By: by}) {
			return true
		}
		m.sent = was
	}
}

// Recv takes the oldest message. With none buffered and no parked sender,
// when the channel is open and wait is non-nil, it parks wait's Waiter and
// returns (nil, nil): the Waiter is woken with the message or with
// Closed. With wait nil (try_recv) it returns (nil, nil) at once. Once the
// channel is closed and drained it returns ErrClosed. The caller owns
// the message it gets and must Release it once the value is in its heap.
func (c *Chan) Recv(wait func() Waiter, by any) (*Msg, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	if m, ok := st.buf.pop(); ok {
		st.unhold(m)
		// A place freed: the first live parked sender's message moves in.
		if s, ok := c.takeSender(by); ok {
			st.hold(s.m) // a select's message was not counted yet
			st.buf.push(s.m)
		}
		return m, nil
	}
	if s, ok := c.takeSender(by); ok { // a rendezvous, or give-backs drained
		st.unhold(s.m)
		return s.m, nil
	}
	if st.closed {
		return nil, ErrClosed
	}
	if wait != nil {
		st.recvq.push(wait(), Waiter.Live, nil)
	}
	return nil, nil
}

// takeSender ends the wait of the first parked sender whose wait is live,
// as sent, and returns it (its message still counted by the channel).
// Stale senders met on the way give their messages' charges back.
func (c *Chan) takeSender(by any) (sender, bool) {
	st := c.st
	for {
		s, ok := st.sendq.pop()
		if !ok {
			return sender{}, false
		}
		m := s.msg() // before the wake: once it wins, the select may go on
		if m == nil {
			continue // a spent select case's entry (senderLive)
		}
		m.sent = true
		if s.w.Wake(Result{By: by}) {
			return sender{s.w, m}, true
		}
		m.sent = false
		st.dropSender(s)
	}
}

// Requeue puts back at the head of the queue a message handed to a
// receiver that will not take it (cancelled after its wake won, or its
// heap had no room): the next receiver gets it first. It goes past the
// capacity if need be, and into a closed channel too (receivers drain it).
func (c *Chan) Requeue(m *Msg, by any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handToReceiver(m, by) {
		return
	}
	c.st.hold(m)
	c.st.buf.pushFront(m)
}

// Close closes the channel: parked senders are woken with Closed (their
// messages stay theirs), parked receivers are woken with Closed when
// nothing is buffered (otherwise there are none). It returns ErrClosed
// for a channel already closed.
func (c *Chan) Close(by any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.st
	if st.closed {
		return ErrClosed
	}
	st.closed = true
	for {
		s, ok := st.sendq.pop()
		if !ok {
			break
		}
		st.dropSender(s)
		s.w.Wake(Result{Closed: true, By: by})
	}
	for {
		w, ok := st.recvq.pop()
		if !ok {
			break
		}
		w.Wake(Result{Closed: true, By: by})
	}
	return nil
}
