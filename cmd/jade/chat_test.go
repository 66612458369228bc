//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
	"github.com/jadevm/jade/internal/testkit"
)

const (
	chatClients = 200 // with the slow one
	chatLines   = 5   // lines each reading client sends
	chatOutCap  = 128 // the outbound channels' capacity (OUTCAP)
	chatMidLine = 10  // clients that disconnect mid-line
	// chatBatch is the most lines the test lets be on their way to a
	// reading client: it sends that many, then waits for them. Well under
	// chatOutCap, so that a reading client is never cut off as slow
	// however long a loaded machine keeps its connection task from
	// running (a burst of OUTCAP lines from the hub while one task waits
	// on a worker's thread that the OS took away would cut it off: a
	// reading client and a slow one look the same to the server then).
	chatBatch   = 60
	floodLen    = 1024
	chatBye     = "* the server is shutting down"
	chatSlowCut = " was disconnected: it did not read"
)

// TestChatRoom drives examples/chat.jasm on both backends at 1, 2 and 4
// workers: 199 reading clients each send lines that every other one
// receives, in order, exactly once; a client that never reads (a small
// receive buffer) is disconnected once its outbound channel is full while
// the others keep going and are told; clients that disconnect mid-line
// (a close, a reset) leave nothing behind; at SIGTERM every client gets
// the last line and then FIN, and jade exits 0.
func TestChatRoom(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
			chatRoom(t, bin, workers)
		})
	})
}

// chatClient is one reading client: its lines as they come.
type chatClient struct {
	c   net.Conn
	id  string
	mu  sync.Mutex
	got []string // guarded by mu
	end error    // how the stream ended (io.EOF: FIN); guarded by mu
	// kinds counts the lines got of each kind (lineKind); guarded by mu.
	kinds [4]int
	done  chan struct{}
}

// Kinds of lines.
const (
	kindOther = iota
	kindLine  // a reading client's line
	kindFlood // a flood line
	kindCut   // a notice of a disconnection (cutID: whose)
)

func lineKind(s string) int {
	_, text, _ := strings.Cut(s, ": ")
	switch {
	case strings.HasSuffix(s, chatSlowCut):
		return kindCut
	case strings.HasPrefix(text, "f"):
		return kindFlood
	case strings.HasPrefix(text, "c"):
		return kindLine
	}
	return kindOther
}

// cutID returns the id a notice of a disconnection names.
func cutID(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(s, "* "), chatSlowCut)
}

func (c *chatClient) read(r *bufio.Reader) {
	defer close(c.done)
	for {
		s, err := r.ReadString('\n')
		if err != nil {
			c.c.Close() // as a client does at the server's end of stream
			c.mu.Lock()
			c.end = err
			if s != "" {
				c.end = fmt.Errorf("a partial line %q before %w", s, err)
			}
			c.mu.Unlock()
			return
		}
		s = strings.TrimSuffix(s, "\n")
		k := lineKind(s)
		c.mu.Lock()
		c.got = append(c.got, s)
		c.kinds[k]++
		c.mu.Unlock()
	}
}

// count returns how many of c's lines satisfy f.
func (c *chatClient) count(f func(string) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.got {
		if f(s) {
			n++
		}
	}
	return n
}

// parseLine parses "c<from> m<k>".
func parseLine(text string) (from, k int, err error) {
	a, b, ok := strings.Cut(strings.TrimPrefix(text, "c"), " m")
	if !ok {
		return 0, 0, fmt.Errorf("line %q", text)
	}
	if from, err = strconv.Atoi(a); err == nil {
		k, err = strconv.Atoi(b)
	}
	if err == nil && (from < 0 || from >= chatClients-1) {
		err = fmt.Errorf("line %q: no client %d", text, from)
	}
	return from, k, err
}

// kind returns how many of c's lines are of kind k.
func (c *chatClient) kind(k int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kinds[k]
}

func startChat(t *testing.T, bin string, workers, outcap int) (*exec.Cmd, string, *bytes.Buffer) {
	t.Helper()
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(bin, "run", "--workers", strconv.Itoa(workers), "--drain-timeout", "10s",
		filepath.Join("..", "..", "examples", "chat.jasm"), addr, strconv.Itoa(outcap))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			cmd.Wait()
			t.Logf("jade's stdout: %.2000s\nstderr: %.2000s", &stdout, &stderr)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return cmd, addr, &stderr
		}
		require.True(t, time.Now().Before(deadline), "jade does not accept on %s: %v (stderr %s)", addr, err, &stderr)
		time.Sleep(10 * time.Millisecond)
	}
}

// join connects a client and reads its welcome.
func join(t *testing.T, addr string) (net.Conn, *bufio.Reader, string) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(60*time.Second)))
	r := bufio.NewReader(c)
	w, err := r.ReadString('\n')
	require.NoError(t, err)
	return c, r, welcomeID(t, w)
}

// welcomeID returns the id the welcome w gives.
func welcomeID(t *testing.T, w string) string {
	t.Helper()
	id, ok := strings.CutPrefix(w, "* welcome, you are ")
	require.True(t, ok, "welcome %q", w)
	id, _, _ = strings.Cut(id, ";")
	return id
}

// readWelcome reads the welcome from c a byte at a time (no more than
// it) and returns the id it gives.
func readWelcome(t *testing.T, c net.Conn) string {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	var w []byte
	b := make([]byte, 1)
	for len(w) == 0 || w[len(w)-1] != '\n' {
		_, err := c.Read(b)
		require.NoError(t, err, "the welcome so far: %q", w)
		w = append(w, b[0])
	}
	return welcomeID(t, string(w))
}

// waitAll waits until every client satisfies f (a few seconds at most
// on a quiet machine; the bound is for a hang).
func waitAll(t *testing.T, cs []*chatClient, what string, f func(c *chatClient) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, c := range cs {
		for !f(c) {
			if time.Now().After(deadline) {
				c.mu.Lock()
				defer c.mu.Unlock()
				last := c.got[max(0, len(c.got)-3):]
				for i, s := range last {
					last[i] = s[:min(len(s), 60)]
				}
				var cuts []string
				for _, s := range c.got {
					if lineKind(s) == kindCut {
						cuts = append(cuts, s)
					}
				}
				t.Fatalf("client %s: %s: %d lines, the last %q, end %v; notices %q", c.id, what, len(c.got), last, c.end, cuts)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

func chatRoom(t *testing.T, bin string, workers int) {
	t0 := time.Now()
	lap := func(what string) { t.Logf("%v: %s", time.Since(t0).Round(time.Millisecond), what) }
	cmd, addr, stderr := startChat(t, bin, workers, chatOutCap)
	lap("started")
	cs := make([]*chatClient, chatClients-1)
	for i := range cs {
		c, r, id := join(t, addr)
		cs[i] = &chatClient{c: c, id: id, done: make(chan struct{})}
		go cs[i].read(r)
	}
	defer func() {
		for _, c := range cs {
			c.c.Close()
		}
	}()

	lap("joined")
	// The slow client: a small receive buffer, and it never reads. Its
	// line shows it is a member.
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			// A small window and segment: the server's send buffer,
			// sized from the segment (loopback's is 64 KiB), stays small.
			serr = errors.Join(syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096),
				syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536))
		})
		return errors.Join(err, serr)
	}}
	slow, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	slowID := readWelcome(t, slow)
	_, err = slow.Write([]byte("slow here\n"))
	require.NoError(t, err)
	waitAll(t, cs, "the slow client's line", func(c *chatClient) bool {
		return c.count(func(s string) bool { return strings.HasSuffix(s, ": slow here") }) == 1
	})

	lap("slow joined")
	// Clients that disconnect mid-line: a close, or a reset. Until its
	// connection task has seen the end, such a client is a member that
	// does not read: it may be disconnected as slow, and its notice may
	// come (at most once).
	gone := map[string]bool{}
	for i := range chatMidLine {
		c, _, id := join(t, addr)
		gone[id] = true
		_, err := c.Write([]byte("partial line, never ended"))
		require.NoError(t, err)
		if i%2 == 1 {
			require.NoError(t, c.(*net.TCPConn).SetLinger(0))
		}
		c.Close()
	}

	// The reading clients send their lines, chatBatch/chatLines clients
	// at once, then wait for every other one to receive them.
	for lo := 0; lo < len(cs); lo += chatBatch / chatLines {
		hi := min(lo+chatBatch/chatLines, len(cs))
		var wg sync.WaitGroup
		errs := make(chan error, hi-lo)
		for i := lo; i < hi; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var b strings.Builder
				for k := range chatLines {
					fmt.Fprintf(&b, "c%d m%d\n", i, k)
				}
				_, err := cs[i].c.Write([]byte(b.String()))
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for i, c := range cs {
			want := hi * chatLines // from clients 0..hi-1 but itself
			if i < hi {
				want -= chatLines
			}
			waitAll(t, []*chatClient{c}, "the lines", func(c *chatClient) bool { return c.kind(kindLine) >= want })
		}
	}

	lap("sent")
	// Client 0 floods in batches until the slow client is cut off; each
	// batch is waited for by every other client, so that only the slow
	// one falls behind.
	flood := strings.Repeat("x", floodLen)
	sent := 0
	slowCut := "* " + slowID + chatSlowCut
	isSlowCut := func(s string) bool { return s == slowCut }
	for cs[1].count(isSlowCut) == 0 {
		require.Less(t, sent, 20000, "the slow client was not disconnected")
		var b strings.Builder
		for k := range chatBatch {
			fmt.Fprintf(&b, "f%d %s\n", sent+k, flood)
		}
		_, err := cs[0].c.Write([]byte(b.String()))
		require.NoError(t, err)
		sent += chatBatch
		waitAll(t, cs[1:], "the flood", func(c *chatClient) bool { return c.kind(kindFlood) >= sent })
	}
	waitAll(t, cs, "the notice of the slow client's disconnection", func(c *chatClient) bool { return c.count(isSlowCut) >= 1 })
	waitAll(t, cs, "every line", func(c *chatClient) bool { return c.kind(kindLine) == (len(cs)-1)*chatLines })

	lap("flooded")
	// The slow client's connection was closed: it reads what was
	// buffered, then the end (FIN or a reset), not a timeout.
	require.NoError(t, slow.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = io.Copy(io.Discard, slow)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the slow client is still connected: %v", err)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for _, c := range cs {
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("client %s: no end of stream after SIGTERM", c.id)
		}
	}
	require.Equal(t, exitSuccess, waitExit(t, cmd, 30*time.Second), "stderr: %s", stderr)
	lap("drained")

	for i, c := range cs {
		c.mu.Lock()
		got, end := c.got, c.end
		c.mu.Unlock()
		require.ErrorIs(t, end, io.EOF, "client %s: the stream ended with FIN", c.id)
		require.Equal(t, chatBye, got[len(got)-1], "client %s: the last line", c.id)
		next := make([]int, len(cs)) // the next line expected from each sender
		floods := 0
		cuts := map[string]int{} // notices of disconnections by whom they name
		for _, s := range got[:len(got)-1] {
			_, text, _ := strings.Cut(s, ": ")
			if strings.Contains(s, "partial") {
				t.Fatalf("client %s got a partial line: %q", c.id, s)
			}
			switch lineKind(s) {
			case kindFlood:
				k, err := strconv.Atoi(strings.TrimPrefix(text[:strings.IndexByte(text, ' ')], "f"))
				if i == 0 || err != nil || k != floods {
					t.Fatalf("client %s (index %d): flood line %d is %.20q", c.id, i, floods, text)
				}
				floods++
			case kindLine:
				from, k, err := parseLine(text)
				if err != nil || from == i || k != next[from] {
					t.Fatalf("client %s (index %d): line %q out of place (want line %d of its sender): %v", c.id, i, text, next[from], err)
				}
				next[from]++
			case kindCut:
				cuts[cutID(s)]++
			}
		}
		require.Equal(t, 1, cuts[slowID], "client %s: notices of the slow client's (%s) disconnection", c.id, slowID)
		for id, n := range cuts {
			// Only the slow client, and clients that disconnected
			// mid-line before their connection task saw it, do not read.
			if id != slowID && (!gone[id] || n != 1) {
				t.Fatalf("client %s: %d notices of the disconnection of %s (not the slow client %s, nor one that disconnected mid-line)", c.id, n, id, slowID)
			}
		}
		for from, n := range next {
			if from != i && n != chatLines {
				t.Fatalf("client %s: %d lines of client %d, want %d", c.id, n, from, chatLines)
			}
		}
		if i != 0 && floods != sent {
			t.Fatalf("client %s: %d flood lines, want %d", c.id, floods, sent)
		}
	}
	lap("checked")
	t.Logf("workers=%d: the slow client was cut off after %d flood lines of %d bytes", workers, sent, floodLen+8)
}
