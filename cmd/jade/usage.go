package main

import (
	"flag"
	"fmt"
	"io"
)

// The usage texts: `jade -h` is the map (every subcommand with the flags
// most runs need), and each subcommand's -h lists all its flags after a
// synopsis and a short example. TestUsageMap keeps the map's flags
// defined.

// usageMap is `jade -h`.
const usageMap = `usage: jade COMMAND [flags] ...   (jade COMMAND -h: all of its flags and an example)

jade run [flags] FILE.jasm|FILE.jbc [ARGS...]     run main(args) of a program
    --workers N                 worker threads (default GOMAXPROCS-1, or $JADE_WORKERS)
    --engine-config FILE        declare engines, their limits and capabilities (JSON; docs/ENGINES.md)
    --max-memory BYTES          memory limit of the default engine's tasks
    --drain-timeout D           on SIGTERM: close the listeners, wait D for the tasks to end (default 20s)
    --debug-addr ADDR           serve /debug/tasks, /debug/metrics, /debug/pprof, /debug/jade/profile, /debug/jade/trace
    --task-stats                per-task slices, reductions and time Runnable in /debug/tasks and the task dump
    --jade-cpuprofile FILE      Jade CPU profile (functions, .jasm lines; go tool pprof)
    --jade-heapprofile FILE     Jade heap profile
    --cpuprofile FILE, --memprofile FILE            Go-level profiles of the runtime
    --trace FILE, --flight N, --long-slice D        scheduler trace (ui.perfetto.dev; docs/TRACE.md)
    -v                          describe the runtime (CPU, workers, VM loop, I/O backend) on stderr
jade asm --check FILE.jasm                        assemble and verify
jade asm --dis [--pcs] FILE.jasm|FILE.jbc         disassemble (--pcs: pc and file:line per instruction)
jade asm -o OUT.jbc FILE.jasm                     write the binary form
jade perf [flags]                                 the side-by-side performance harness
    --quick                     smaller sizes (under 30 s)
    --scenarios a,b             run only these scenarios
    --html FILE, --json FILE    write the report as HTML (charts) or JSON
    --peers                     add the Tokio and BEAM peers beside goroutines
    --reps N                    repetitions per measurement (medians)

signals (run): SIGTERM drains, SIGINT cancels main, SIGUSR1 dumps the tasks
  (where each waits, file:line, and for what), SIGUSR2 dumps the flight recorder
exit codes (run): 0 success, 1 failure, 3 cancelled, 4 load/verify error, 5 trap,
  6 main succeeded but the drain's deadline cancelled other tasks, 64 usage;
  2 is a crash of the jade process (a fatal Go runtime error), never a program's outcome
`

func usage(w io.Writer) int {
	fmt.Fprint(w, usageMap)
	return exitUsage
}

// Each subcommand's -h: its synopsis and an example, then its flags.
const (
	runHelp = `usage: jade run [flags] FILE.jasm|FILE.jbc [ARGS...]

Runs main of the program: main() or main(args:ref), the ARGS as strings.
Example: serve on :8080 with 4 workers, the debug pages on :6060, a 5 s
drain on SIGTERM and a 256 MiB memory limit:

  jade run --workers 4 --debug-addr localhost:6060 --drain-timeout 5s \
      --max-memory 268435456 examples/http.jasm 127.0.0.1:8080

flags:
`
	asmHelp = `usage: jade asm --check|--dis [--pcs]|-o OUT.jbc FILE

Assembles and verifies a program; prints its disassembly or writes its
binary form. Example:

  jade asm --dis --pcs examples/fanout.jasm

flags:
`
	perfHelp = `usage: jade perf [flags]

Runs Jade and goroutines (and, with --peers, Tokio and BEAM) side by
side on the same scenarios and reports each ratio. Example:

  jade perf --quick --scenarios spawn_join,fairness --html perf.html

flags:
`
)

// setHelp makes fs's -h print help (synopsis and example) and then fs's
// flags.
func setHelp(fs *flag.FlagSet, help string) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), help)
		fs.PrintDefaults()
	}
}
