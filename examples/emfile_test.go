//go:build linux

package examples_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/hostbus"
	"github.com/jadevm/jade/internal/testkit"
)

// TestAcceptEMFILE: a server out of file descriptors keeps serving its
// existing connections while its accepts fail with EMFILE, does not end
// main, and accepts the waiting clients once the existing ones close.
//
// The server runs in this process, so the test's own client sockets count
// against the same RLIMIT_NOFILE. The test lowers the soft limit to just
// above the highest descriptor in use and fills every free number below it
// with spare descriptors (/dev/null); from then on nothing can get a
// descriptor unless the test closes a spare. Each waiting client closes one
// spare right before it dials, so its socket() takes that number and the
// server's accept of the connection finds none (the kernel keeps the
// connection in the listen backlog when accept fails with EMFILE).
func TestAcceptEMFILE(t *testing.T) {
	for _, prog := range []struct {
		file      string
		req, want func(i int) []byte
	}{
		{"echo.jasm",
			func(i int) []byte { return []byte(fmt.Sprintf("conn %d says hello\n", i)) },
			func(i int) []byte { return []byte(fmt.Sprintf("conn %d says hello\n", i)) }},
		{"resp_ping.jasm",
			func(i int) []byte { return []byte(multibulk("PING", strconv.Itoa(i))) },
			func(i int) []byte { return []byte(bulk(strconv.Itoa(i))) }},
	} {
		t.Run(strings.TrimSuffix(prog.file, ".jasm"), func(t *testing.T) {
			testkit.Pollers(t, func(t *testing.T) {
				testAcceptEMFILE(t, prog.file, prog.req, prog.want)
			})
		})
	}
}

func testAcceptEMFILE(t *testing.T, file string, req, want func(i int) []byte) {
	if countFDs() < 0 {
		t.Skip("no /proc/self/fd: the test needs it to find the descriptors in use")
	}
	const existing, waiting = 6, 4 // 2 fds per existing connection free up 12 for 4 waiting ones
	s := startServer(t, file, 2)
	var conns []*net.TCPConn
	for i := 0; i < existing; i++ {
		c := s.dial(t)
		defer c.Close()
		require.NoError(t, roundTrip(c, req(i), want(i)), "existing connection %d", i)
		conns = append(conns, c)
	}
	s.waitLiveAtLeast(t, 1+existing)

	spares := exhaustFDs(t)
	// Clients that connect while the server cannot accept.
	var pending []*net.TCPConn
	for i := 0; i < waiting; i++ {
		c, err := spares.dial(s.addr)
		require.NoError(t, err, "waiting client %d", i)
		defer c.Close()
		pending = append(pending, c)
	}
	// Its requests are in the socket buffers; the server cannot read them.
	for i, c := range pending {
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Write(req(existing + i))
		require.NoError(t, err, "waiting client %d: write", i)
	}
	// Several failed accepts in a row (the backoff sleeps 5, 10, 20, ... ms),
	// and the existing connections are served throughout.
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		for i, c := range conns {
			require.NoError(t, roundTrip(c, req(i), want(i)), "existing connection %d while accepts fail", i)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-hostbus.Task(s.main).Done():
		o, _ := hostbus.Task(s.main).Outcome()
		t.Fatalf("main ended while accepts failed: %s", o)
	default:
	}
	if n := s.liveTasks(); n >= 1+existing+waiting {
		t.Fatalf("%d live tasks: the server accepted every waiting client without a free descriptor; the test did not provoke EMFILE", n)
	}

	// The existing clients go away; their descriptors (ours and the
	// server's) make room, and the waiting clients are served.
	for _, c := range conns {
		c.Close()
	}
	for i, c := range pending {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got := make([]byte, len(want(existing+i)))
		_, err := readFull(c, got)
		require.NoError(t, err, "waiting client %d after the others closed", i)
		if !bytes.Equal(got, want(existing+i)) {
			t.Fatalf("waiting client %d: got %q, want %q", i, got, want(existing+i))
		}
		require.NoError(t, roundTrip(c, req(100+i), want(100+i)), "waiting client %d, second round trip", i)
	}
	// With the limit back, a new client is served at once.
	spares.restore(t)
	c := s.dial(t)
	defer c.Close()
	require.NoError(t, roundTrip(c, req(200), want(200)), "new client after recovery")
}

// readFull is io.ReadFull on a connection.
func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// waitLiveAtLeast waits until at least n tasks are live (connection tasks
// start shortly after the client's dial returns).
func (s *ioServer) waitLiveAtLeast(t testing.TB, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.liveTasks() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d live tasks, want at least %d", s.liveTasks(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// fdSpares holds the descriptors that fill the process's table up to a
// lowered RLIMIT_NOFILE.
type fdSpares struct {
	orig  syscall.Rlimit
	files []*os.File
	done  bool
}

// exhaustFDs lowers the soft RLIMIT_NOFILE to 16 above the highest
// descriptor in use and opens /dev/null until open fails with EMFILE, so
// that no descriptor is free. The cleanup restores the limit and closes
// the spares.
func exhaustFDs(t *testing.T) *fdSpares {
	t.Helper()
	sp := &fdSpares{}
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &sp.orig), "getrlimit")
	es, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	highest := 0
	for _, e := range es {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			highest = max(highest, n)
		}
	}
	lim := sp.orig
	lim.Cur = uint64(highest) + 16
	if lim.Cur >= sp.orig.Cur {
		t.Skipf("RLIMIT_NOFILE %d is too low to lower below %d", sp.orig.Cur, lim.Cur)
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim), "setrlimit")
	t.Cleanup(func() { sp.restore(t) })
	for {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		require.NoError(t, err, "open %s", os.DevNull)
		sp.files = append(sp.files, f)
	}
	return sp
}

// dial connects to addr after closing one spare for the client's socket;
// if something else took the number first (the server's accept retry),
// it closes the next spare and tries again.
func (sp *fdSpares) dial(addr string) (*net.TCPConn, error) {
	for len(sp.files) > 0 {
		f := sp.files[len(sp.files)-1]
		sp.files = sp.files[:len(sp.files)-1]
		f.Close()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if errors.Is(err, syscall.EMFILE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return c.(*net.TCPConn), nil
	}
	return nil, errors.New("no spare descriptors left")
}

// restore puts the original limit back and closes the spares (idempotent).
func (sp *fdSpares) restore(t *testing.T) {
	if sp.done {
		return
	}
	sp.done = true
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &sp.orig); err != nil {
		t.Errorf("restore RLIMIT_NOFILE: %v", err)
	}
	for _, f := range sp.files {
		f.Close()
	}
	sp.files = nil
}
