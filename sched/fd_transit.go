package sched

import "sync"

// Descriptors in transit: a hand-over whose receiver is not known when it
// begins (a socket or file handle sent in a channel message). DetachFD
// takes the FD from its owner — the owner's end no longer closes it, and
// its uses of the handle are refused — and puts it in the scheduler's
// transit set. PassFD gives it its next owner (the receiver); ReturnFD
// gives it back to the task that detached it (a message that was not
// sent), or closes it when that task has ended; CloseFD closes it (a
// message sent and dropped unreceived). Shutdown closes whatever is still
// in transit once every task has ended. So a descriptor in transit is
// closed exactly once unless an owner takes it.

// transitSet is the set of detached FDs. Lock order: FD.mu, then mu.
type transitSet struct {
	mu  sync.Mutex
	fds map[*FD]struct{} // guarded by mu; f is here exactly when f.detached
}

func (ts *transitSet) add(f *FD) {
	ts.mu.Lock()
	if ts.fds == nil {
		ts.fds = make(map[*FD]struct{})
	}
	ts.fds[f] = struct{}{}
	ts.mu.Unlock()
}

// ended takes f out of the set after endTransitLocked returned from (nil:
// f was not in transit) and drops f's reference on from's record; f.mu
// not held (the drop may recycle the record).
func (ts *transitSet) ended(f *FD, from *Task) {
	if from == nil {
		return
	}
	ts.mu.Lock()
	delete(ts.fds, f)
	ts.mu.Unlock()
	from.unref()
}

// snapshot returns the FDs in transit now.
func (ts *transitSet) snapshot() []*FD {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]*FD, 0, len(ts.fds))
	for f := range ts.fds {
		out = append(out, f)
	}
	return out
}

// endTransitLocked ends f's transit (f.mu held) and returns the task that
// detached f, whose reference the caller drops with transitSet.ended
// after f.mu is released; nil when f was not in transit.
func (f *FD) endTransitLocked() *Task {
	if !f.detached {
		return nil
	}
	from := f.from
	f.detached, f.from = false, nil
	return from
}

// DetachFD takes f from its owner from for a hand-over whose receiver is
// not known yet: f then has no owner, its old owner's end no longer
// closes it, and only PassFD (the next owner), ReturnFD or CloseFD ends
// the transit. ok is false, and nothing changes, when from does not own
// f: owner is then f's owner's id (0 when f is closing or already in
// transit).
func (c *Control) DetachFD(from *Task, f *FD) (ok bool, owner uint64) {
	f.mu.Lock()
	if f.owner != from || f.closing {
		if f.owner != nil {
			owner = f.owner.id
		}
		f.mu.Unlock()
		return false, owner
	}
	f.disownLocked()
	from.refs.Add(1) // from is live (it owned f): its record is kept
	f.detached, f.from = true, from
	c.s.transit.add(f) // under f.mu: ended runs after it
	f.mu.Unlock()
	return true, 0
}

// ReturnFD gives f, in transit, back to the task that detached it, or
// closes it when that task has ended (its end would have closed it). It
// does nothing when f is not in transit.
func (c *Control) ReturnFD(f *FD) {
	f.mu.Lock()
	from := f.endTransitLocked()
	ok := from != nil && f.ownLocked(from)
	f.mu.Unlock()
	c.s.transit.ended(f, from)
	if from != nil && !ok {
		c.CloseFD(f)
	}
}

// Detached reports whether f is in transit (DetachFD).
func (f *FD) Detached() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.detached
}

// inTransit returns the number of descriptors in transit (DetachFD) now.
func (c *Control) inTransit() int {
	ts := &c.s.transit
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.fds)
}

// closeTransit closes every descriptor still in transit (Shutdown, once
// no task is left to receive one).
func (s *Scheduler) closeTransit() {
	for _, f := range s.transit.snapshot() {
		s.closeFDRef(f)
	}
}
