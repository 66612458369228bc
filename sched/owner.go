package sched

// Runtime boundaries. Every task, event and descriptor belongs to one
// scheduler: a task to the scheduler of its engine, an event to the one
// it was made for (Event.owner), an FD to the scheduler of the task that
// owns it. A wait registers a token of a task of this scheduler, and a
// wake runs this scheduler's wake path (run queues, counters, the
// registry) on the task it names; so an object of one scheduler handed
// to the tasks of another would have the first scheduler's workers wake
// the second's tasks, its counters drift and both shutdowns fail. The
// host boundary (package bus) asks Owns of every object a value carries
// into a runtime and refuses the value when it says false.

// NewEvent returns an unsignalled event of this scheduler.
func (c *Control) NewEvent() *Event {
	e := &Event{}
	e.owner.Store(c.s)
	return e
}

// Owns reports whether obj, a *Task, *Event or *FD, belongs to this
// scheduler; any other object (a host's own) is not the scheduler's to
// judge and is reported as owned. An event not yet bound to a scheduler
// (NewEvent) is bound to this one. An FD no task owns (closed, or its
// owner ended) is reported as owned: every operation on it is refused
// anyway.
func (c *Control) Owns(obj any) bool {
	switch o := obj.(type) {
	case *Task:
		return o.engine.s == c.s
	case *Event:
		return o.bind(c.s)
	case *FD:
		o.mu.Lock()
		owner := o.owner
		o.mu.Unlock()
		return owner == nil || owner.engine.s == c.s
	default:
		return true
	}
}
