package perf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jadevm/jade/internal/syncbuf"
)

// Counting the system calls of another process for a while, with strace
// (-c -f -p: every thread, a summary at detach) or perf stat (the
// raw_syscalls:sys_enter tracepoint for the total, beside one
// syscalls:sys_enter_NAME tracepoint for each call in perfCalls; enabling
// every syscalls:* tracepoint takes minutes on a small VM). strace stops
// the traced thread at every call, so the traced server runs slower than
// its client and finds data waiting more often: a Go net server at one
// connection shows far fewer EAGAIN reads, epoll_pwait and futex calls
// traced than untraced (docs/PERFORMANCE.md). perf stat counts in the kernel without stopping anyone, so auto prefers
// it. Counts are taken in a window of their own, never during a timed run.

// perfCalls are the calls perf stat counts one by one: the echo servers'
// I/O, polling, parking and preemption calls.
var perfCalls = []string{"futex", "io_uring_enter", "epoll_pwait", "epoll_wait", "read", "write",
	"nanosleep", "sched_yield", "tgkill", "rt_sigreturn", "madvise", "mmap"}

// Syscall counter names for Options.Syscalls.
const (
	SyscallsAuto   = "auto"   // perf stat where usable, else strace where installed, else none
	SyscallsStrace = "strace" // strace -c -f -p PID
	SyscallsPerf   = "perf"   // perf stat -e 'syscalls:sys_enter_*' -p PID
	SyscallsNone   = "none"   // no counts
)

// syscallTool resolves a counter name to the tool to use here; when none
// can be used it returns "" and why.
func syscallTool(want string) (tool, why string) {
	switch want {
	case SyscallsNone:
		return "", "system-call counts off (--syscalls none)"
	case SyscallsStrace:
		if _, err := exec.LookPath("strace"); err != nil {
			return "", "strace is not installed (apt-get install strace)"
		}
		return SyscallsStrace, ""
	case SyscallsPerf:
		if err := perfUsable(); err != nil {
			return "", err.Error()
		}
		return SyscallsPerf, ""
	case "", SyscallsAuto:
		if perfUsable() == nil {
			return SyscallsPerf, ""
		}
		if _, err := exec.LookPath("strace"); err == nil {
			return SyscallsStrace, ""
		}
		return "", "neither strace nor perf stat with the syscalls tracepoints can be used here " +
			"(install strace: apt-get install strace; perf needs perf_event_paranoid <= -1 or root)"
	}
	return "", fmt.Sprintf("unknown system-call counter %q (auto, strace, perf or none)", want)
}

// perfUsable says whether perf stat can count a syscalls tracepoint here.
func perfUsable() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf is not installed")
	}
	out, err := exec.Command("perf", "stat", "-x,", "-e", "syscalls:sys_enter_getpid", "--", "true").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sys_enter_getpid") || strings.Contains(string(out), "<not") {
		return fmt.Errorf("perf stat cannot count syscalls:sys_enter_getpid here (%v: %s)", err, bytes.TrimSpace(out))
	}
	return nil
}

// sysCounter is a running strace or perf stat attached to one process.
type sysCounter struct {
	tool string
	cmd  *exec.Cmd
	file string // where the counter writes its summary
	dir  string
	errs *syncbuf.Buffer
}

// startCounter attaches tool to every thread of process pid and returns
// once it counts.
func startCounter(tool string, pid int) (*sysCounter, error) {
	dir, err := os.MkdirTemp("", "jade-syscalls-")
	if err != nil {
		return nil, fmt.Errorf("perf: syscall counter: %w", err)
	}
	c := &sysCounter{tool: tool, file: filepath.Join(dir, "summary"), dir: dir, errs: &syncbuf.Buffer{}}
	p := strconv.Itoa(pid)
	if tool == SyscallsStrace {
		c.cmd = exec.Command("strace", "-c", "-f", "-o", c.file, "-p", p)
	} else {
		ev := []string{"raw_syscalls:sys_enter"}
		for _, n := range perfCalls {
			ev = append(ev, "syscalls:sys_enter_"+n)
		}
		c.cmd = exec.Command("perf", "stat", "-x,", "-I", "100", "-o", c.file, "-e", strings.Join(ev, ","), "-p", p)
	}
	c.cmd.Stderr = c.errs
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("perf: %s: %w", tool, err)
	}
	// strace says "Process PID attached with N threads" once it has
	// attached to every thread (or "Process PID attached" for a lone
	// one); perf stat writes its first interval 100 ms after it starts
	// counting.
	counting := func() bool {
		if tool == SyscallsStrace {
			return strings.Contains(c.errs.String(), " attached")
		}
		b, _ := os.ReadFile(c.file)
		return strings.Contains(string(b), "raw_syscalls:sys_enter")
	}
	for deadline := time.Now().Add(30 * time.Second); !counting(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.cmd.Process.Kill()
			c.cmd.Wait()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("perf: %s did not start counting: %s", tool, c.errs.String())
		}
	}
	return c, nil
}

// stop detaches the counter and returns the calls it counted by name.
func (c *sysCounter) stop() (map[string]int64, error) {
	defer os.RemoveAll(c.dir)
	c.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // perf stat disables its tracepoints slowly on a small VM
		c.cmd.Process.Kill()
		<-done
		return nil, fmt.Errorf("perf: %s did not stop: %s", c.tool, c.errs.String())
	}
	b, err := os.ReadFile(c.file)
	if err != nil {
		return nil, fmt.Errorf("perf: %s: summary: %w (%s)", c.tool, err, c.errs.String())
	}
	if c.tool == SyscallsStrace {
		return parseStrace(b)
	}
	return parsePerfStat(b)
}

// parseStrace reads the table strace -c writes: a header, a rule, one line
// per call (% time, seconds, usecs/call, calls, [errors,] name), a rule
// and a total line, which is left out.
func parseStrace(b []byte) (map[string]int64, error) {
	counts := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] == "%" || strings.HasPrefix(f[0], "-") || f[len(f)-1] == "total" {
			continue
		}
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("perf: strace summary: line %q: %w", sc.Text(), err)
		}
		counts[f[len(f)-1]] += n
	}
	return counts, nil
}

// parsePerfStat reads perf stat -x, -I output: time,count,unit,event,...
// per interval and event, summed over the intervals; raw_syscalls (every
// call) becomes "total". Events that were not counted are left out.
func parsePerfStat(b []byte) (map[string]int64, error) {
	counts := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(f) < 4 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue // a comment, <not counted>, <not supported>
		}
		switch ev := f[3]; {
		case ev == "raw_syscalls:sys_enter":
			counts[sysTotalKey] += n
		case strings.HasPrefix(ev, "syscalls:sys_enter_") && n > 0:
			counts[strings.TrimPrefix(ev, "syscalls:sys_enter_")] += n
		}
	}
	if _, ok := counts[sysTotalKey]; !ok {
		return nil, fmt.Errorf("perf: perf stat counted no system calls: %q", b)
	}
	return counts, nil
}

// sysTotalKey holds perf stat's count of every call; strace's summary has
// every call by name instead.
const sysTotalKey = "(all)"

// sysTotal is the number of calls counted.
func sysTotal(m map[string]int64) int64 {
	if n, ok := m[sysTotalKey]; ok {
		return n
	}
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// sysTop formats the most frequent calls per round trip, most first.
func sysTop(m map[string]int64, rts int64, most int) string {
	type kv struct {
		k string
		v int64
	}
	var s []kv
	for k, v := range m {
		if k != sysTotalKey {
			s = append(s, kv{k, v})
		}
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
	var parts []string
	for i, e := range s {
		if i == most {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.3f", e.k, float64(e.v)/float64(max(rts, 1))))
	}
	return strings.Join(parts, ", ")
}
