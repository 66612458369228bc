//go:build !linux

package sched

import "time"

// parker blocks one worker until another unparks it. Outside Linux it is a
// one-slot channel: a send never blocks and a token sent before the worker
// blocks is kept, so an unpark is never lost. A park with a timeout waits
// on a reused timer as well; without one there is no timer and no periodic
// wake-up.
type parker struct {
	ch    chan struct{}
	timer *time.Timer
}

// park blocks until a token is available and consumes it, or until timeout
// nanoseconds have passed (timeout < 0: no limit).
func (p *parker) park(timeout int64) {
	if p.ch == nil {
		panic("sched: parker not initialised")
	}
	if timeout < 0 {
		<-p.ch
		return
	}
	if p.timer == nil {
		p.timer = time.NewTimer(time.Duration(timeout))
	} else {
		p.timer.Reset(time.Duration(timeout))
	}
	select {
	case <-p.ch:
		p.timer.Stop()
	case <-p.timer.C:
	}
}

func (p *parker) unpark() {
	select {
	case p.ch <- struct{}{}:
	default:
	}
}
