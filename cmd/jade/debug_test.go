//go:build unix

package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
)

// TestDebugAddrAndDump: --debug-addr serves the tasks page, SIGUSR1 dumps
// the tasks to stderr, SIGINT still cancels main.
func TestDebugAddrAndDump(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	path := write(t, "w.jasm", ".func main() -> i64\n .local ev:ref, z:i64\n evnew ev\n evwait ev\n const z, 0\n ret z\n.end\n")
	cmd := exec.Command(bin, "run", "--debug-addr", "127.0.0.1:0", path)
	stderr, _ := cmd.StderrPipe()
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(want string) string {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "stderr closed before %q", want)
				if strings.Contains(l, want) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q on stderr", want)
			}
		}
	}
	l := next("debug server on http://")
	url := strings.Fields(l[strings.Index(l, "http://"):])[0]
	var page string
	for i := 0; i < 100; i++ {
		resp, err := http.Get(url + "tasks")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page = string(b)
			if strings.Contains(page, "Waiting") {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(page, "main@") || !strings.Contains(page, "Waiting") {
		t.Fatalf("tasks page:\n%s", page)
	}
	cmd.Process.Signal(syscall.SIGUSR1)
	next("1 live tasks")
	next("main@")
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitCancelled {
		t.Fatalf("exit %v", err)
	}
}
