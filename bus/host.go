package bus

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// HostFunc implements a host intrinsic (the FFI boundary). It runs on a
// worker thread and must return quickly: it either returns its result (or
// an error, thrown in the task as a catchable HostError) at once, or calls
// Call.Suspend and completes later from any goroutine through the returned
// Completion. It must never block the worker (every task queued behind it
// would stall). A panic becomes a Trap of the calling task.
type HostFunc func(c *Call) (vmloop.Value, error)

type hostIntrinsic struct {
	desc     vmloop.Intrinsic
	need     Capability
	fn       HostFunc
	blocking BlockingFunc // instead of fn: runs on the blocking pool (blocking.go)
}

// Call is one invocation of a host intrinsic.
type Call struct {
	b *Bus
	// t is the calling task, valid only while the host function runs (a
	// completed task's record may be reused); id and engine outlive it.
	t         *sched.Task
	id        uint64
	engine    string
	name      string // the intrinsic's
	args      []vmloop.Value
	suspended *Completion
}

// Args returns the arguments as JadeValues (copies).
func (c *Call) Args() []vmloop.Value { return c.args }

// TaskID returns the id of the calling task.
func (c *Call) TaskID() uint64 { return c.id }

// Engine returns the name of the calling task's engine.
func (c *Call) Engine() string { return c.engine }

// Suspend makes the calling task wait; the intrinsic's return value is then
// ignored and the task resumes when the Completion is completed. Call it
// from the host function itself, not after it returned.
func (c *Call) Suspend() *Completion {
	if c.suspended == nil {
		c.suspended = &Completion{b: c.b, tok: c.b.ctl.Suspend(c.t), name: c.name}
	}
	return c.suspended
}

// Completion completes a suspended host intrinsic exactly once, from any
// goroutine.
type Completion struct {
	b    *Bus
	tok  sched.Token
	name string // the intrinsic's, for a trap's text
}

// Complete resumes the task with result v. It returns false if the call was
// already completed or the task was cancelled meanwhile. A v holding a
// task, event or I/O handle of another runtime (ErrForeign) is refused:
// the task traps instead, and Complete returns false.
func (p *Completion) Complete(v vmloop.Value) bool {
	if p.refuseForeign(v) {
		return false
	}
	return p.b.ctl.CompleteHost(p.tok, v, nil, nil)
}

// refuseForeign traps the task, and reports true, when v holds another
// runtime's object.
func (p *Completion) refuseForeign(v vmloop.Value) bool {
	what := p.b.foreign(v)
	if what == "" {
		return false
	}
	ti := foreignTrap(p.name, what)
	p.b.ctl.CompleteHost(p.tok, vmloop.Void(), nil, &ti)
	return true
}

// CompleteRelease is Complete for a value that holds something the host
// must take back if the task never receives it: when Complete has won
// (returned true) but the task is cancelled before it resumes, release
// runs with v on the worker that ends the task. When CompleteRelease
// returns false, release does not run and v is the caller's again. A v
// holding another runtime's object is refused as by Complete.
func (p *Completion) CompleteRelease(v vmloop.Value, release func(vmloop.Value)) bool {
	if p.refuseForeign(v) {
		return false
	}
	return p.b.ctl.CompleteHostRelease(p.tok, v, release)
}

// Fail resumes the task by throwing err (a catchable HostError).
func (p *Completion) Fail(err error) bool {
	e := vmloop.Err(vmloop.ErrKindHost, err.Error())
	return p.b.ctl.CompleteHost(p.tok, vmloop.Void(), &e, nil)
}

// RegisterIntrinsic adds a host intrinsic named family.name (not a name of
// the central table) with its signature. Tasks of engines without the
// capability need get a catchable CapabilityError when they call it
// (need 0 means CapHost).
func (b *Bus) RegisterIntrinsic(name string, params []vmloop.Type, result vmloop.Type, need Capability, fn HostFunc) error {
	if fn == nil {
		return fmt.Errorf("bus: register intrinsic %q: nil function", name)
	}
	return b.register(name, params, result, need, fn, nil)
}

// register adds a host intrinsic run by fn, or by blocking on the pool.
func (b *Bus) register(name string, params []vmloop.Type, result vmloop.Type, need Capability, fn HostFunc, blocking BlockingFunc) error {
	if i := strings.IndexByte(name, '.'); i <= 0 || i == len(name)-1 {
		return fmt.Errorf("bus: register intrinsic %q: name must be family.name", name)
	}
	if _, ok := vmloop.LookupIntrinsic(name); ok {
		return fmt.Errorf("bus: register intrinsic %q: the name belongs to the central intrinsic table", name)
	}
	for _, p := range params {
		if p == vmloop.TVoid || p > vmloop.TRef {
			return fmt.Errorf("bus: register intrinsic %q: parameter type %s not allowed", name, p)
		}
	}
	if result > vmloop.TRef {
		return fmt.Errorf("bus: register intrinsic %q: result type %s is not void, i64, f64 or ref", name, result)
	}
	if need == 0 {
		need = CapHost
	}
	b.hostMu.Lock()
	defer b.hostMu.Unlock()
	if _, dup := b.hostBy[name]; dup {
		return fmt.Errorf("bus: register intrinsic %q: already registered", name)
	}
	h := &hostIntrinsic{
		desc: vmloop.Intrinsic{ID: vmloop.HostIntrinsicBase + vmloop.IntrinsicID(len(b.hostID)), Name: name,
			Params: append([]vmloop.Type(nil), params...), Result: result, Since: vmloop.Version{Major: vmloop.ABI.Major}, IntrOK: true},
		need: need, fn: fn, blocking: blocking,
	}
	b.hostBy[name] = h
	b.hostID = append(b.hostID, h)
	return nil
}

func (b *Bus) callHost(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) (act sched.Action) {
	b.hostMu.RLock()
	idx := int(req.Intr.ID - vmloop.HostIntrinsicBase)
	var h *hostIntrinsic
	if idx < len(b.hostID) {
		h = b.hostID[idx]
	}
	b.hostMu.RUnlock()
	if h == nil {
		return trap(ex, vmloop.TrapInfo{Code: vmloop.TrapIntrinsic, Msg: "unknown host intrinsic " + req.Intr.Name})
	}
	if a, ok := b.authorize(t, ex, h.desc.Name, h.need); !ok {
		return a
	}
	c := &Call{b: b, t: t, id: t.ID(), engine: t.Engine().Name(), name: h.desc.Name, args: make([]vmloop.Value, req.NArgs)}
	for i := range c.args {
		v, err := ex.ArgValue(i)
		if err != nil {
			return trap(ex, err)
		}
		c.args[i] = v
	}
	if h.blocking != nil {
		// time.timeout bounds the wait for a blocking call's result.
		act = b.timedWait(t, ex, req, func(b *Bus, _ *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
			return b.startBlocking(c, ex, req, h)
		})
		c.t = nil // see below
		return act
	}
	defer func() {
		if r := recover(); r != nil {
			b.reportPanic(HostPanic{Intrinsic: h.desc.Name, TaskID: c.id, Engine: c.engine, Value: r, Stack: debug.Stack()})
			act = trap(ex, vmloop.TrapInfo{Code: vmloop.TrapHostPanic, Msg: fmt.Sprintf("%s panicked: %s", h.desc.Name, panicText(r))})
		}
	}()
	v, err := h.fn(c)
	c.t = nil // the task's record may be reused once it ends: a late Suspend panics rather than touch another task
	if c.suspended != nil {
		return sched.ActSuspend
	}
	if err != nil {
		return raise(ex, vmloop.Err(vmloop.ErrKindHost, fmt.Sprintf("%s: %v", h.desc.Name, err)))
	}
	if h.desc.Result == vmloop.TVoid {
		v = vmloop.Void()
	}
	if what := b.foreign(v); what != "" {
		return trap(ex, foreignTrap(h.desc.Name, what))
	}
	return complete(ex, v, sched.ActContinue)
}

// reportPanic hands a host panic to Config.HostPanic, or writes it with
// its stack to os.Stderr.
func (b *Bus) reportPanic(p HostPanic) {
	if b.onPanic != nil {
		b.onPanic(p)
		return
	}
	fmt.Fprintf(os.Stderr, "bus: host intrinsic %s panicked in task %d (engine %q): %s\n%s", p.Intrinsic, p.TaskID, p.Engine, panicText(p.Value), p.Stack)
}

// panicText is what a trap says of a panic value: the text of an error or
// a string (the host's own words), else only its type, never a Go value
// that may print host addresses.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	default:
		return fmt.Sprintf("a panic value of type %T", v)
	}
}
