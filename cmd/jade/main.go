// Command jade runs and inspects Jade programs.
//
//	jade run [flags] FILE.jasm|FILE.jbc [ARGS...]   run main(args)
//	jade asm --check FILE.jasm                      assemble and verify
//	jade asm --dis [--pcs] FILE.jasm|FILE.jbc       disassemble (--pcs: pc and file:line per instruction)
//	jade asm -o OUT.jbc FILE.jasm                   write the binary form
//	jade perf [flags]                               the side-by-side performance harness
//
// jade echoproc serve|load [flags] and jade httpproc serve|mixed [flags]
// are left out of the usage text: they are child processes of `jade
// perf`'s echo_proc, http and http_mixed scenarios (a server, or its load
// client, each in a process of its own; bench.EchoProcMain,
// bench.HTTPProcMain).
//
// Exit codes of jade run: 0 Success, 1 Failure (uncaught throw), 3
// Cancelled, 4 load or verify error, 5 Trap, 6 main succeeded but a
// drain's deadline cancelled other tasks, 64 usage error. 2 is never
// used by jade itself: it is what the Go runtime exits with on a fatal
// error (a crash of the host process), so it always means a crash.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bench"
	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/jtrace"
	"github.com/jadevm/jade/native"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/uring"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// Exit codes. 2 is left out: the Go runtime exits with it on a fatal
// error (stack overflow, out of memory, a concurrent map write), which
// nothing in the process can intercept, so a Trap must differ from it.
const (
	exitSuccess   = 0
	exitFailure   = 1
	exitCancelled = 3
	exitLoad      = 4
	exitTrap      = 5
	exitDrain     = 6 // main succeeded, but the drain's deadline cancelled other tasks
	exitUsage     = 64
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return usage(stderr)
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "asm":
		return cmdAsm(args[1:], stdout, stderr)
	case "perf":
		return cmdPerf(args[1:], stdout, stderr)
	case "echoproc":
		return bench.EchoProcMain(args[1:], os.Stdin, stdout, stderr)
	case "httpproc":
		return bench.HTTPProcMain(args[1:], os.Stdin, stdout, stderr)
	case "-h", "--help", "help":
		usage(stdout)
		return exitSuccess
	}
	fmt.Fprintf(stderr, "jade: unknown command %q\n", args[0])
	return usage(stderr)
}

// printErr prints err on stderr after "jade: ", unless its text starts
// with it already: the errors of the jade package name it themselves
// ("jade: new: ...").
func printErr(stderr io.Writer, err error) {
	fmt.Fprintln(stderr, "jade: "+errs.Cause(err.Error(), ""))
}

// helpOrUsage is the exit code of a failed flag parse: success for -h
// (the help was printed), a usage error otherwise.
func helpOrUsage(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitSuccess
	}
	return exitUsage
}

// load reads a .jasm source, linked with the modules it imports (found
// next to it, in the lib directories, in $JADE_PATH and in the built-in
// std), or a binary program (magic "JADE").
func load(path string, lib []string) (*vmloop.Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(src, []byte("JADE")) {
		p, err := vmloop.UnmarshalProgram(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return p, nil
	}
	return jasm.Link(path, src, jasm.LinkOptions{Path: jasm.LibPath(lib)})
}

// libFlags is the repeatable --lib DIR flag.
type libFlags []string

func (l *libFlags) String() string     { return strings.Join(*l, ",") }
func (l *libFlags) Set(v string) error { *l = append(*l, v); return nil }

// addLibFlag declares --lib on fs.
func addLibFlag(fs *flag.FlagSet) *libFlags {
	var l libFlags
	fs.Var(&l, "lib", "look for imported .jasm modules in `DIR` (repeatable; before $JADE_PATH and the built-in std)")
	return &l
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setHelp(fs, runHelp)
	cpuprof := fs.String("cpuprofile", "", "write a Go-level CPU profile of the run (the VM loop, workers, cgo; labelled by engine) to `FILE`")
	memprof := fs.String("memprofile", "", "write a Go-level heap profile at the end of the run to `FILE`")
	jcpuprof := fs.String("jade-cpuprofile", "", "write a Jade-level CPU profile (Jade functions and .jasm lines; labelled by engine and task) to `FILE`")
	jperiod := fs.Duration("jade-profile-period", 0, "time between two samples of a busy worker in the Jade CPU profile (default 10ms)")
	jheapprof := fs.String("jade-heapprofile", "", "write a Jade-level heap profile (Jade heap bytes by allocation site: allocated during the run, in use at its end) to `FILE`")
	debugAddr := fs.String("debug-addr", "", "serve /debug/pprof, /debug/jade/profile, /debug/jade/heap, /debug/vars, /debug/metrics and /debug/tasks on `ADDR`")
	goLoop := fs.Bool("go-loop", false, "run on the pure-Go VM loop even where the cgo loop is available")
	pin := fs.Bool("pin", false, "pin each worker thread to one allowed CPU (Linux)")
	workers := fs.Int("workers", 0, fmt.Sprintf("worker threads (0: $JADE_WORKERS, else GOMAXPROCS−1; here %d)", sched.DefaultWorkers()))
	reductions := fs.Int64("reductions", 0, fmt.Sprintf("reduction limit of the default engine (default %d, max %d)", sched.DefaultReductionLimit, sched.MaxReductionLimit))
	verbose := fs.Bool("v", false, "describe the runtime on stderr")
	lib := addLibFlag(fs)
	engineCfg := fs.String("engine-config", "", "declare engines from the JSON `FILE` (docs/ENGINES.md); its \"main\" engine runs main")
	drainTimeout := fs.Duration("drain-timeout", defaultDrainTimeout, "on SIGTERM, how long to wait for the tasks to end after the listeners close, before cancelling the rest")
	traceFile := fs.String("trace", "", "record the scheduler's events (task slices, wakes, steals, parks, I/O, GC) to `FILE` as Chrome trace-event JSON: open it in ui.perfetto.dev (docs/TRACE.md)")
	flight := fs.Int("flight", 0, fmt.Sprintf("keep the last `N` scheduler events per worker (the flight recorder; 0: $JADE_FLIGHT, where 1 means %d): kill -USR2 and /debug/jade/trace dump it", sched.DefaultFlightEvents))
	flightDir := fs.String("flight-dir", "", "write flight-recorder dumps to `DIR` (default the temporary directory)")
	longSlice := fs.Duration("long-slice", 0, "log (and with the flight recorder, dump) slices of the default engine longer than this (0: off)")
	longCall := fs.Duration("long-call", 0, "log (and with the flight recorder, dump) non-blocking host calls longer than this (0: off)")
	longWait := fs.Duration("long-wait", 0, "log (and with the flight recorder, dump) sampled run-queue waits longer than this (--latency-sample; 0: off)")
	latSample := fs.Int("latency-sample", 0, fmt.Sprintf("timestamp one enqueue in `N` for the latency histograms of /debug/metrics (0: %d; 1: every enqueue; -1: none)", sched.DefaultLatencySample))
	taskStats := fs.Bool("task-stats", false, "keep per-task statistics (slices, reductions, time Runnable) for the default engine's tasks, shown in /debug/tasks and the task dump")
	maxMem := fs.Int64("max-memory", 0, fmt.Sprintf("memory limit of the default engine's tasks in `BYTES` (memoryBytes; default %d)", int64(sched.DefaultMaxMemoryBytes)))
	if err := fs.Parse(args); err != nil {
		return helpOrUsage(err)
	}
	softMemoryLimit(*maxMem)
	if fs.NArg() < 1 {
		return usage(stderr)
	}
	if *flight > jtrace.MaxFlightEvents {
		fmt.Fprintf(stderr, "jade: --flight %d: the flight recorder keeps at most %d events per worker (%d MiB each)\n",
			*flight, jtrace.MaxFlightEvents, jtrace.MaxFlightEvents*int(unsafe.Sizeof(jtrace.Event{}))>>20)
		return exitUsage
	}
	path := fs.Arg(0)
	p, err := load(path, *lib)
	if err != nil {
		printErr(stderr, err)
		return exitLoad
	}
	rt, err := jade.New(jade.Options{Workers: *workers, PinCPUs: *pin, GoLoop: *goLoop, ReductionLimit: *reductions,
		Limits: sched.ResourceLimits{MemoryBytes: *maxMem}, Stdout: stdout, ProfilePeriod: *jperiod,
		LatencySample: *latSample, TaskStats: *taskStats,
		FlightEvents: *flight, FlightDir: *flightDir, LongSlice: *longSlice, LongCall: *longCall, LongWait: *longWait})
	if err != nil {
		printErr(stderr, err)
		if errors.Is(err, sched.ErrConfig) || errors.Is(err, uring.ErrUnknownPoller) {
			return exitUsage
		}
		return exitLoad
	}
	mainEngine := rt.Main()
	if *engineCfg != "" {
		f, err := readEngineFile(*engineCfg)
		if err == nil {
			mainEngine, err = applyEngines(rt, f)
		}
		if err != nil {
			printErr(stderr, err)
			rt.Shutdown(context.Background())
			return exitUsage
		}
	}
	if err := rt.Verify(p); err != nil {
		printVerifyError(stderr, path, err)
		return exitLoad
	}
	mainIdx := p.FuncIndex("main")
	if mainIdx < 0 {
		fmt.Fprintf(stderr, "jade: %s: no function main (define .func main(args:ref) -> i64)\n", path)
		return exitLoad
	}
	var callArgs []vmloop.Value
	switch params := p.Funcs[mainIdx].Params; {
	case len(params) == 0:
	case len(params) == 1 && params[0] == vmloop.TRef:
		callArgs = []vmloop.Value{vmloop.StrArray(fs.Args()[1:])}
	default:
		fmt.Fprintf(stderr, "jade: %s: main must take no parameters or one ref (the argument array), not %v\n", path, params)
		return exitLoad
	}
	if *verbose {
		describeRuntime(stderr, rt)
	}
	stopProf, err := startProfiles(*cpuprof, *memprof)
	if err != nil {
		printErr(stderr, err)
		return exitUsage
	}
	defer stopProf()
	stopJade, err := startJadeProfiles(rt, *jcpuprof, *jheapprof)
	if err != nil {
		printErr(stderr, err)
		return exitUsage
	}
	defer stopJade()
	stopDebug, err := startDebug(rt, *debugAddr, stderr)
	if err != nil {
		printErr(stderr, err)
		return exitUsage
	}
	defer stopDebug()
	stopTrace, err := startTrace(rt, *traceFile, stderr)
	if err != nil {
		printErr(stderr, err)
		return exitUsage
	}
	defer stopTrace()
	// Registered before the spawn, so a signal never meets the default.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	task, err := rt.SpawnWith(jade.SpawnOptions{Engine: mainEngine}, p, "main", callArgs...)
	if err != nil {
		signal.Stop(sig)
		printErr(stderr, err)
		return exitLoad
	}
	o, drainErr := runMain(rt, task, sig, *drainTimeout, stderr)
	signal.Stop(sig)
	if err := stopJade(); err != nil {
		printErr(stderr, err)
	}
	if err := stopTrace(); err != nil {
		printErr(stderr, err)
	}
	if drainErr != nil {
		fmt.Fprintln(stderr, drainErr)
		if o.Kind == sched.Success {
			return exitDrain
		}
	}
	switch o.Kind {
	case sched.Success:
		if o.Value.Kind() != vmloop.KindVoid {
			fmt.Fprintln(stdout, o.Value.String())
		}
		return exitSuccess
	case sched.Failure:
		fmt.Fprintf(stderr, "jade: main failed: uncaught %s\n", o.Value)
		printStack(stderr, "thrown", o.Stack)
		return exitFailure
	case sched.Trapped:
		fmt.Fprintf(stderr, "jade: main trapped: %v\n", o.Trap.Error())
		printStack(stderr, "trapped", o.Stack)
		return exitTrap
	default:
		fmt.Fprintln(stderr, "jade: main was cancelled")
		return exitCancelled
	}
}

func cmdAsm(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("asm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setHelp(fs, asmHelp)
	check := fs.Bool("check", false, "assemble and verify; print nothing on success")
	dis := fs.Bool("dis", false, "print the disassembly")
	pcs := fs.Bool("pcs", false, "with --dis: print each instruction's pc and source file:line beside it")
	out := fs.String("o", "", "write the verified binary program to `FILE`")
	lib := addLibFlag(fs)
	if err := fs.Parse(args); err != nil {
		return helpOrUsage(err)
	}
	if fs.NArg() != 1 || (!*check && !*dis && *out == "") {
		return usage(stderr)
	}
	path := fs.Arg(0)
	p, err := load(path, *lib)
	if err != nil {
		printErr(stderr, err)
		return exitLoad
	}
	if err := vmloop.Verify(p, nil); err != nil {
		printVerifyError(stderr, path, err)
		return exitLoad
	}
	if *dis {
		if err := jasm.Fprint(stdout, p, jasm.Options{Annotate: *pcs, Lines: *pcs}); err != nil {
			printErr(stderr, err)
			return exitLoad
		}
	}
	if *out != "" {
		data, err := p.MarshalBinary()
		if err == nil {
			err = os.WriteFile(*out, data, 0o644)
		}
		if err != nil {
			printErr(stderr, err)
			return exitLoad
		}
	}
	return exitSuccess
}

// printStack prints the Jade call stack where main threw or trapped, one
// frame a line with its file:line, innermost first.
func printStack(stderr io.Writer, what string, s vmloop.Stack) {
	if len(s.Frames) == 0 {
		return
	}
	fmt.Fprintf(stderr, "jade: %s at:\n%s\n", what, s)
}

// printVerifyError prints a verifier rejection of the program at path. An
// error that names the source file already says file:line; otherwise the
// path is printed before it.
func printVerifyError(stderr io.Writer, path string, err error) {
	var ve *vmloop.VerifyError
	if errors.As(err, &ve) && ve.File != "" {
		printErr(stderr, err)
		return
	}
	fmt.Fprintln(stderr, errs.Wrap("jade", path, err))
}

// describeRuntime prints the CPU (klauspost/cpuid), the workers, GOMAXPROCS
// and what the scheduler changed (jade run -v).
func describeRuntime(w io.Writer, rt *jade.Runtime) {
	c := &cpuid.CPU
	fmt.Fprintf(w, "jade: CPU %s: %d physical cores, %d threads, %d-byte cache line\n",
		c.BrandName, c.PhysicalCores, c.LogicalCores, c.CacheLine)
	s := hostbus.Scheduler(rt)
	pin := ""
	if s.Pinned() {
		pin = ", pinned"
	}
	fmt.Fprintf(w, "jade: %d worker(s)%s, GOMAXPROCS %d, reduction limit %d, ABI %s\n",
		s.Workers(), pin, runtime.GOMAXPROCS(0), hostbus.Member(rt).Engine().Config().ReductionLimit, vmloop.ABI)
	if note := s.Note(); note != "" {
		fmt.Fprintf(w, "jade: %s\n", note)
	}
	loop := "Go loop (cgo loop unavailable: CGO_ENABLED=0, -tags purego or JADE_NATIVE=0)"
	switch {
	case hostbus.Member(rt).Engine().Config().GoLoop:
		loop = "Go loop (--go-loop)"
	case native.Enabled():
		loop = "cgo loop (package native) for the hot subset, Go loop for the rest"
	}
	fmt.Fprintf(w, "jade: VM: %s\n", loop)
	// Workers open their backends on their own threads just after Start.
	be := s.IOBackend()
	for i := 0; be == "" && i < 200; i++ {
		time.Sleep(time.Millisecond)
		be = s.IOBackend()
	}
	if be == "" {
		be = "none"
	}
	fmt.Fprintf(w, "jade: I/O backend: %s, one per worker (JADE_POLLER=uring|epoll selects)\n", be)
}

// softMemoryLimit gives Go's collector a soft limit of the engine's
// memory limit plus half of it (for the runtime's own memory and the
// garbage of copies), unless GOMEMLIMIT sets one: the engine's budget
// bounds what tasks hold, and the collector must then not let garbage
// grow the process to twice that (GOGC's default) before it runs.
func softMemoryLimit(maxMem int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if maxMem <= 0 {
		maxMem = sched.DefaultMaxMemoryBytes
	}
	debug.SetMemoryLimit(maxMem + maxMem/2)
}
