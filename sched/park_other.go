//go:build !linux

package sched

// parker blocks one worker until another unparks it. Outside Linux it is a
// one-slot channel: a send never blocks and a token sent before the worker
// blocks is kept, so an unpark is never lost. No timer, no periodic wake-up.
type parker struct {
	ch chan struct{}
}

func (p *parker) park() {
	if p.ch == nil {
		panic("sched: parker not initialised")
	}
	<-p.ch
}

func (p *parker) unpark() {
	select {
	case p.ch <- struct{}{}:
	default:
	}
}
