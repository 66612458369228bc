package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jadevm/jade/perf"
)

// cmdPerf runs the side-by-side harness: jade perf [--quick] [--scenarios a,b]
// [--json FILE] [--reps N] [--cpuprofile FILE] [--memprofile FILE]
// [--syscalls auto|strace|perf|none] [--peers]. echo_proc starts this executable
// again as its child processes (jade echoproc).
func cmdPerf(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setHelp(fs, perfHelp)
	quick := fs.Bool("quick", false, "smaller sizes (under 30 s)")
	scen := fs.String("scenarios", "", "comma-separated scenario names (default: all): "+strings.Join(perf.Names(), ","))
	jsonOut := fs.String("json", "", "write the report as JSON to `FILE`")
	htmlOut := fs.String("html", "", "write a self-contained HTML report to `FILE`")
	reps := fs.Int("reps", 3, "repetitions per measurement (medians are reported)")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile to `FILE`")
	memprof := fs.String("memprofile", "", "write a heap profile to `FILE`")
	syscalls := fs.String("syscalls", perf.SyscallsAuto, "echo_proc's system-call counter: auto (perf stat where usable, else strace), strace, perf or none")
	peers := fs.Bool("peers", false, "also run the Tokio and BEAM peers (bench/peers; installs erlang-base, librust-tokio-dev and cargo with apt-get when missing and possible) and add their columns")
	if err := fs.Parse(args); err != nil {
		return helpOrUsage(err)
	}
	if fs.NArg() != 0 {
		return usage(stderr)
	}
	switch *syscalls {
	case perf.SyscallsAuto, perf.SyscallsStrace, perf.SyscallsPerf, perf.SyscallsNone:
	default:
		fmt.Fprintf(stderr, "jade: perf: --syscalls %q: auto, strace, perf or none\n", *syscalls)
		return exitUsage
	}
	var names []string
	if *scen != "" {
		names = strings.Split(*scen, ",")
	}
	stopProf, err := startProfiles(*cpuprof, *memprof)
	if err != nil {
		fmt.Fprintf(stderr, "jade: perf: %v\n", err)
		return exitUsage
	}
	defer stopProf()
	o := perf.Options{Quick: *quick, Scenarios: names, Reps: *reps, Progress: stderr, Syscalls: *syscalls, Peers: *peers}
	if self, err := os.Executable(); err == nil {
		o.EchoProc = []string{self, "echoproc"}
		o.HTTPProc = []string{self, "httpproc"}
	}
	rep, err := perf.Run(o)
	if err != nil {
		printErr(stderr, err)
		if rep == nil {
			return exitUsage
		}
	}
	perf.WriteTable(stdout, rep)
	if *jsonOut != "" {
		f, err := os.Create(*jsonOut)
		if err == nil {
			err = perf.WriteJSON(f, rep)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "jade: perf: %v\n", err)
			return exitLoad
		}
	}
	if *htmlOut != "" {
		f, err := os.Create(*htmlOut)
		if err == nil {
			err = perf.WriteHTML(f, rep)
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "jade: perf: %v\n", err)
			return exitLoad
		}
	}
	return exitSuccess
}
