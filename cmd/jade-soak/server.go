//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jadevm/jade/internal/syncbuf"
)

// raiseNoFile sets the soft RLIMIT_NOFILE to the hard limit. An explicit
// Setrlimit also stops os/exec from giving children the limit the process
// started with, so the server inherits the raised one.
func raiseNoFile(need int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("jade-soak: getrlimit: %w", err)
	}
	if lim.Max < uint64(need) {
		return fmt.Errorf("jade-soak: RLIMIT_NOFILE: hard limit %d is below the %d descriptors this scale needs (raise it or lower -conns)", lim.Max, need)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("jade-soak: setrlimit: %w", err)
	}
	return nil
}

// pinning puts the load generator (every thread of this process, and so
// the threads it starts later) on all allowed CPUs but the first and
// returns the first for the server's taskset. Without taskset or with
// fewer than 2 allowed CPUs nothing is pinned.
func pinning() (serverCPU, loadCPUs string) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		fmt.Printf("jade-soak: not pinning: sched_getaffinity: %v\n", err)
		return "", ""
	}
	var cpus []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		fmt.Println("jade-soak: not pinning: taskset is not installed")
		return "", ""
	}
	if len(cpus) < 2 {
		fmt.Printf("jade-soak: not pinning: %d CPU allowed, need 2 (server and load generator)\n", len(cpus))
		return "", ""
	}
	var load unix.CPUSet
	var names []string
	for _, c := range cpus[1:] {
		load.Set(c)
		names = append(names, strconv.Itoa(c))
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			unix.SchedSetaffinity(tid, &load)
		}
	}
	runtime.GOMAXPROCS(len(cpus) - 1)
	serverCPU, loadCPUs = strconv.Itoa(cpus[0]), strings.Join(names, ",")
	fmt.Printf("jade-soak: server on CPU %s (taskset), load generator on CPU %s\n", serverCPU, loadCPUs)
	return serverCPU, loadCPUs
}

// server is a running `jade run` child.
type server struct {
	cmd    *exec.Cmd
	addr   string // the echo server
	debug  string // http://host:port/debug/
	stderr *syncbuf.Buffer
	exited chan struct{}
	err    error // after exited
}

// startServer starts the echo server for leg l and waits until it accepts.
func startServer(c *config, l leg) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	jade, err := filepath.Abs(c.jade)
	if err != nil {
		return nil, fmt.Errorf("jade-soak: %w", err)
	}
	argv := []string{jade, "run", "--debug-addr", "127.0.0.1:0", c.prog, addr}
	if c.serverCPU != "" {
		argv = append([]string{"taskset", "-c", c.serverCPU}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "JADE_POLLER="+l.poller, "JADE_WORKERS="+strconv.Itoa(l.workers))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("jade-soak: start server: %w", err)
	}
	s := &server{cmd: cmd, addr: addr, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("jade-soak: start server: %w", err)
	}
	debugURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.stderr, line)
			if i := strings.Index(line, "http://"); i >= 0 && strings.Contains(line, "debug server") {
				select {
				case debugURL <- strings.Fields(line[i:])[0]:
				default:
				}
			}
		}
		io.Copy(s.stderr, pipe)
		s.err = cmd.Wait()
		close(s.exited)
	}()
	timeout := time.After(10 * time.Second)
	select {
	case s.debug = <-debugURL:
	case <-s.exited:
		return nil, fmt.Errorf("jade-soak: server exited before serving: %v\n%s", s.err, s.stderr)
	case <-timeout:
		s.stop()
		return nil, fmt.Errorf("jade-soak: server printed no debug address in 10 s\n%s", s.stderr)
	}
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("jade-soak: server exited before accepting: %v\n%s", s.err, s.stderr)
		case <-timeout:
			s.stop()
			return nil, fmt.Errorf("jade-soak: server does not accept on %s: %w", addr, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("jade-soak: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// alive reports an error if the server has exited.
func (s *server) alive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("server exited: %v; stderr: %s", s.err, strings.TrimSpace(s.stderr.String()))
	default:
		return nil
	}
}

// stop interrupts the server (main is cancelled) and kills it after 5 s.
func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// fds is the number of open descriptors of the server.
func (s *server) fds() (int, error) {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("jade-soak: server fds: %w", err)
	}
	return len(es), nil
}

// rss is the server's resident set in bytes (VmRSS).
func (s *server) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("jade-soak: server status: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("jade-soak: server VmRSS: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("jade-soak: server status: no VmRSS")
}

// heap is the server's Go heap after a forced GC.
type heap struct{ inuse, alloc int64 }

var debugClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true}, // no debug connection left open among the server's fds
}

// heap forces two GCs in the server (the heap profile's gc=1 runs one
// before it reads the memory statistics; the second frees what the first
// moved to sync.Pool's victim caches) and returns HeapInuse and HeapAlloc
// from the profile's runtime.MemStats comment lines.
func (s *server) heap() (heap, error) {
	var h heap
	for i := 0; i < 2; i++ {
		resp, err := debugClient.Get(s.debug + "pprof/heap?gc=1&debug=1")
		if err != nil {
			return h, fmt.Errorf("jade-soak: server heap: %w", err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return h, fmt.Errorf("jade-soak: server heap: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return h, fmt.Errorf("jade-soak: server heap: %s", resp.Status)
		}
		h = heap{inuse: memstat(b, "HeapInuse"), alloc: memstat(b, "HeapAlloc")}
		if h.inuse <= 0 {
			return h, errors.New("jade-soak: server heap: no HeapInuse in the heap profile")
		}
	}
	return h, nil
}

// saveHeap writes the server's heap profile after a GC (the binary
// format, for go tool pprof -base) to path.
func (s *server) saveHeap(path string) error {
	resp, err := debugClient.Get(s.debug + "pprof/heap?gc=1")
	if err != nil {
		return fmt.Errorf("jade-soak: heap profile: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		return fmt.Errorf("jade-soak: heap profile: %w", err)
	}
	return nil
}

// memstat finds "# name = value" in a debug=1 heap profile; -1 if absent.
func memstat(profile []byte, name string) int64 {
	prefix := "# " + name + " = "
	for _, line := range strings.Split(string(profile), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// settledFDs waits up to d for the server's descriptor count to drop to
// want and returns the last count (the lowest seen if it never gets there).
func (s *server) settledFDs(want int, d time.Duration) (int, error) {
	low := -1
	for end := time.Now().Add(d); ; time.Sleep(50 * time.Millisecond) {
		n, err := s.fds()
		if err != nil {
			return 0, err
		}
		if low < 0 || n < low {
			low = n
		}
		if n <= want || time.Now().After(end) {
			return low, nil
		}
	}
}
