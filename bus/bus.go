// Package bus is the RuntimeBus: the only path by which scheduler state
// changes (spec §5.1, S-16). Host commands and requests from bytecode
// (intrinsics) arrive here, are checked against the requesting engine's
// capabilities (S-20), and only then reach the scheduler through its
// Control, which the bus never hands out.
//
// The bus knows who asks from the calling task's record (bytecode) or from
// the Member token the host got when it registered an engine — never from
// an argument of the command.
//
// # Compatibility
//
// This is an implementation package of the Jade runtime, with no
// compatibility promise between versions: its API changes whenever the
// runtime needs it to. A Go host imports the root package,
// github.com/jadevm/jade, whose API and program model are what the
// module's version promises.
package bus

import (
	"context"
	"errors"
	"fmt"
	"github.com/jadevm/jade/internal/chans"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/internal/iosys"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// Capability is a set of grants given to an engine at registration.
// Capabilities are not scheduling policy: the scheduler never sees them.
type Capability uint32

// Capabilities.
const (
	// CapSpawn lets the engine's tasks and members spawn tasks into the
	// engine itself.
	CapSpawn Capability = 1 << iota
	// CapSpawnOther lets members spawn tasks into other engines.
	CapSpawnOther
	// CapCancelOther lets tasks and members cancel tasks of other engines
	// (cancelling within the engine needs no grant).
	CapCancelOther
	// CapConfig lets members change engine runtime configuration.
	CapConfig
	// CapHost lets the engine's tasks call host intrinsics registered with
	// this capability (the default for RegisterIntrinsic).
	CapHost
	// CapIO lets the engine's tasks use the socket and file intrinsics
	// (net.*, file.*).
	CapIO

	// CapUser0 is the first bit free for host-defined capabilities that
	// guard host intrinsics.
	CapUser0 Capability = 1 << 16
)

// CapAll grants everything.
const CapAll Capability = ^Capability(0)

var capNames = []struct {
	c Capability
	n string
}{{CapSpawn, "spawn"}, {CapSpawnOther, "spawn-other"}, {CapCancelOther, "cancel-other"}, {CapConfig, "config"}, {CapHost, "host"}, {CapIO, "io"}}

// ParseCapability returns the capability named n ("spawn", "spawn-other",
// "cancel-other", "config", "host", "io", or "all").
func ParseCapability(n string) (Capability, error) {
	if n == "all" {
		return CapAll, nil
	}
	for _, cn := range capNames {
		if cn.n == n {
			return cn.c, nil
		}
	}
	return 0, fmt.Errorf("bus: capability %q unknown (spawn, spawn-other, cancel-other, config, host, io, all)", n)
}

func (c Capability) String() string {
	var parts []string
	for _, cn := range capNames {
		if c&cn.c != 0 {
			parts = append(parts, cn.n)
			c &^= cn.c
		}
	}
	if c != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(c)))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// ErrDenied is wrapped by every refused command.
var ErrDenied = errors.New("capability denied")

// Config configures a bus and the scheduler under it.
type Config struct {
	// Workers is the number of worker threads (0: sched.DefaultWorkers:
	// $JADE_WORKERS, else GOMAXPROCS minus one P kept for the host and the
	// GC).
	Workers int
	// PinCPUs pins each worker thread to one allowed CPU (Linux only).
	PinCPUs bool
	// Stdout receives io.print_* output (default os.Stdout).
	Stdout io.Writer
	// NoIO starts the workers without completion backends: the net.* and
	// file.* intrinsics then throw an IoError. By default every worker
	// opens one (iosys.Open: io_uring, or epoll; JADE_POLLER selects).
	NoIO bool
	// HostPanic receives a host intrinsic's panic, with the Go stack of
	// the panicking call (default: written to os.Stderr). The calling task
	// traps with a text that names the intrinsic and the panic's message
	// but never the Go stack or values, since other tasks can read a trap
	// text through their joins.
	HostPanic func(HostPanic)
	// BlockingPool is how many blocking host calls run at once
	// (RegisterBlockingIntrinsic; 0: DefaultBlockingPool).
	BlockingPool int
	// LatencySample is sched.Config.LatencySample: one enqueue in
	// LatencySample is timestamped for the latency histograms.
	LatencySample int
	// FlightEvents and OnLong are sched.Config's: the flight recorder's
	// size per worker, and the receiver of long slices and host calls.
	FlightEvents int
	OnLong       func(sched.LongRun)
}

// HostPanic describes a host intrinsic that panicked (Config.HostPanic).
type HostPanic struct {
	Intrinsic string // family.name
	TaskID    uint64 // the calling task
	Engine    string // its engine
	Value     any    // what the function panicked with
	Stack     []byte // the Go stack of the panic
}

// Bus is the RuntimeBus.
type Bus struct {
	s   *sched.Scheduler
	ctl *sched.Control

	mu      sync.Mutex
	engines atomic.Pointer[[]*Member] // indexed by engine id; copy on write under mu

	hostMu sync.RWMutex
	hostBy map[string]*hostIntrinsic // guarded by hostMu
	hostID []*hostIntrinsic          // index = ID - HostIntrinsicBase; guarded by hostMu
	// blocking runs the blocking host calls (blocking.go).
	blocking *blockingPool

	outMu  sync.Mutex
	stdout io.Writer // guarded by outMu

	onPanic func(HostPanic) // Config.HostPanic; nil: os.Stderr

	// listeners are the engines' listening sockets, closed by a drain
	// (drain.go).
	listeners listeners
	// drain is the channel the drain closes (chan.drain): every task can
	// wait on it, alone or as a select case. Made by New, never nil.
	drain *chans.Chan
}

// Member is the host's registration token for one engine: commands issued
// through it are checked against that engine's capabilities.
type Member struct {
	b    *Bus
	e    *sched.Engine
	caps Capability
}

// New creates a bus and its scheduler; call Start to run the workers.
func New(cfg Config) (*Bus, error) {
	b := &Bus{hostBy: map[string]*hostIntrinsic{}, stdout: cfg.Stdout, onPanic: cfg.HostPanic, blocking: newBlockingPool(cfg.BlockingPool)}
	if b.stdout == nil {
		b.stdout = os.Stdout
	}
	sc := sched.Config{Workers: cfg.Workers, PinCPUs: cfg.PinCPUs, Dispatcher: (*dispatcher)(b), OpenIO: iosys.Open, CloseFD: iosys.Close,
		LatencySample: cfg.LatencySample, FlightEvents: cfg.FlightEvents, OnLong: cfg.OnLong}
	if cfg.NoIO {
		sc.OpenIO = nil
	} else if err := iosys.CheckConfig(); err != nil {
		return nil, errs.Wrap("bus", "new", err)
	}
	s, ctl, err := sched.New(sc)
	if err != nil {
		return nil, errs.Wrap("bus", "new", err)
	}
	b.s, b.ctl = s, ctl
	b.drain, _ = chans.New(chans.ElemI64, 0)
	b.drain.SetOwner(b)
	empty := []*Member{}
	b.engines.Store(&empty)
	return b, nil
}

// Scheduler returns the scheduler for read-only use (metrics, task lists).
func (b *Bus) Scheduler() *sched.Scheduler { return b.s }

// Start runs the workers.
func (b *Bus) Start() error { return b.ctl.Start() }

// RegisterEngine registers an engine with its runtime configuration and
// capability grants, and returns the host's Member token for it.
func (b *Bus) RegisterEngine(name string, cfg sched.EngineRuntimeConfig, caps Capability) (*Member, error) {
	e, err := b.ctl.RegisterEngine(name, cfg)
	if err != nil {
		return nil, errs.Wrap("bus", fmt.Sprintf("register engine %q", name), err)
	}
	m := &Member{b: b, e: e, caps: caps}
	if m.has(CapSpawn) {
		// The spawn row's only check, made once: the VM loop answers
		// the engine's spawns itself (spawnFromTask's work without the
		// dispatch; BenchmarkChainedSpawn).
		b.ctl.SpawnInLoop(e)
	}
	b.mu.Lock()
	old := *b.engines.Load()
	n := make([]*Member, int(e.ID())+1)
	copy(n, old)
	n[e.ID()] = m
	b.engines.Store(&n)
	b.mu.Unlock()
	return m, nil
}

// member returns the registration of engine e.
func (b *Bus) member(e *sched.Engine) *Member {
	ms := *b.engines.Load()
	if id := int(e.ID()); id < len(ms) {
		return ms[id]
	}
	return nil
}

// Engine returns the member's engine.
func (m *Member) Engine() *sched.Engine { return m.e }

// Caps returns the member's capability grants.
func (m *Member) Caps() Capability { return m.caps }

func (m *Member) require(c Capability, op string) error {
	if !m.has(c) {
		return fmt.Errorf("bus: %s: engine %q lacks capability %s (grant it at RegisterEngine): %w", op, m.e.Name(), c&^m.caps, ErrDenied)
	}
	return nil
}

// spawn is Spawn, naming the task name ("": unnamed) before it can run.
func (m *Member) spawn(target *Member, name string, p *vmloop.Program, fn string, args ...vmloop.Value) (*sched.Task, error) {
	if target == nil {
		target = m
	}
	if target.b != m.b {
		return nil, fmt.Errorf("bus: spawn: engine %q: %w", target.e.Name(), ErrForeign)
	}
	need := CapSpawn
	if target != m {
		need = CapSpawnOther
	}
	if err := m.require(need, "spawn"); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, fmt.Errorf("bus: spawn: nil program")
	}
	if err := m.b.checkArgs("spawn", args); err != nil {
		return nil, err
	}
	i := p.FuncIndex(fn)
	if i < 0 {
		return nil, fmt.Errorf("bus: spawn: program has no function %q", fn)
	}
	t, err := m.b.ctl.Prepare(nil, target.e, p, i, args)
	if err != nil {
		return nil, errs.Wrap("bus", "spawn", err)
	}
	m.b.passHandles(t, args) // a handle passed at spawn belongs to the child
	if name != "" {
		m.b.ctl.SetTaskName(t, name)
	}
	m.b.ctl.Launch(nil, t)
	return t, nil
}

// Cancel requests cancellation of t; a task of another engine needs
// CapCancelOther.
func (m *Member) Cancel(t *sched.Task) error {
	if t == nil {
		return fmt.Errorf("bus: cancel: nil task")
	}
	if err := m.b.ownedTask("cancel", t); err != nil {
		return err
	}
	if t.Engine() != m.e {
		if err := m.require(CapCancelOther, "cancel"); err != nil {
			return err
		}
	}
	m.b.ctl.Cancel(nil, t)
	return nil
}

// UpdateConfig replaces the runtime configuration of engine target (nil:
// the member's own); it needs CapConfig.
func (m *Member) UpdateConfig(target *Member, cfg sched.EngineRuntimeConfig) error {
	if target == nil {
		target = m
	}
	if target.b != m.b {
		return fmt.Errorf("bus: update config: engine %q: %w", target.e.Name(), ErrForeign)
	}
	if err := m.require(CapConfig, "update config"); err != nil {
		return err
	}
	if err := m.b.ctl.UpdateEngine(target.e, cfg); err != nil {
		return errs.Wrap("bus", "update config", err)
	}
	return nil
}

// Await waits until t completes or ctx ends. Reading an outcome changes
// nothing, so it needs no capability.
func Await(ctx context.Context, t *sched.Task) (sched.Outcome, error) {
	select {
	case <-t.Done():
		o, _ := t.Outcome()
		return o, nil
	case <-ctx.Done():
		return sched.Outcome{Kind: sched.NoOutcome}, errs.Wrap("bus", fmt.Sprintf("await task %d", t.ID()), ctx.Err())
	}
}

// Drain waits until every task has completed or ctx ends.
func (b *Bus) Drain(ctx context.Context) error { return b.ctl.Drain(ctx) }

// Shutdown cancels every task, waits for them until ctx ends and stops the
// workers; it returns the tasks abandoned at the deadline. Connections a
// drain took from an accept queue (StopListening) that no net.accept
// returned are closed first.
func (b *Bus) Shutdown(ctx context.Context) []sched.TaskReport {
	b.listeners.closeQueued(b.ctl)
	return b.ctl.Shutdown(ctx)
}

// ResolveIntrinsic implements vmloop.Resolver for host intrinsics.
func (b *Bus) ResolveIntrinsic(name string) (*vmloop.Intrinsic, bool) {
	b.hostMu.RLock()
	defer b.hostMu.RUnlock()
	h, ok := b.hostBy[name]
	if !ok {
		return nil, false
	}
	return &h.desc, true
}

// Load verifies p against the central intrinsic table and this bus's host
// intrinsics.
func (b *Bus) Load(p *vmloop.Program) error { return vmloop.Verify(p, b) }

func (b *Bus) print(s string) {
	b.outMu.Lock()
	io.WriteString(b.stdout, s)
	b.outMu.Unlock()
}

// NewEvent makes an event of this runtime, which the host can pass to its
// tasks as an argument (another runtime refuses it: ErrForeign).
func (m *Member) NewEvent() vmloop.Value { return vmloop.Ext(vmloop.KindEvent, m.b.ctl.NewEvent()) }

// Signal signals an event value (wakes one waiter or keeps the signal).
func (m *Member) Signal(ev vmloop.Value) error {
	e, err := m.b.eventOf(ev, "signal")
	if err == nil {
		m.b.ctl.EventSignal(nil, e)
	}
	return err
}

// Broadcast wakes every waiter of an event value.
func (m *Member) Broadcast(ev vmloop.Value) error {
	e, err := m.b.eventOf(ev, "broadcast")
	if err == nil {
		m.b.ctl.EventBroadcast(nil, e)
	}
	return err
}

// eventOf returns the event of value ev, refusing another kind and an
// event of another runtime.
func (b *Bus) eventOf(ev vmloop.Value, op string) (*sched.Event, error) {
	e, ok := ev.Obj().(*sched.Event)
	if !ok || ev.Kind() != vmloop.KindEvent {
		return nil, fmt.Errorf("bus: %s: value is %s, not an event", op, ev.Kind())
	}
	if !b.ctl.Owns(e) {
		return nil, fmt.Errorf("bus: %s: an event of another runtime: %w", op, ErrForeign)
	}
	return e, nil
}
