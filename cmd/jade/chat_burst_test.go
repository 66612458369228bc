//go:build linux

package main

import (
	"bufio"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/feature"
	"github.com/jadevm/jade/internal/testkit"
)

const (
	burstClients = 3
	burstLines   = 5000 // lines each client sends at once
)

// TestChatHubBehind drives examples/chat.jasm with a few clients that
// each send thousands of lines at once while they read: the hub falls
// behind and its lines channel fills, so the connection tasks wait to
// hand it their lines (the send case of their second select) while the
// lines for their clients keep coming. OUTCAP is above all the lines sent,
// so that no client can be cut off: every client receives every other
// one's lines in order, exactly once, then the drain's last line and FIN.
func TestChatHubBehind(t *testing.T) {
	feature.Signals(t)
	bin := jadeBinary(t)
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2}, func(t *testing.T, workers int) {
			chatBurst(t, bin, workers)
		})
	})
}

func chatBurst(t *testing.T, bin string, workers int) {
	cmd, addr, stderr := startChat(t, bin, workers, burstLines*burstClients)
	cs := make([]*chatClient, burstClients)
	rs := make([]*bufio.Reader, burstClients)
	for i := range cs {
		c, r, id := join(t, addr)
		cs[i] = &chatClient{c: c, id: id, done: make(chan struct{})}
		rs[i] = r
	}
	defer func() {
		for _, c := range cs {
			c.c.Close()
		}
	}()
	// The welcomes of later clients went to nobody else; the first lines
	// of each below come after every join.
	for i, c := range cs {
		go c.read(rs[i])
	}
	errs := make(chan error, len(cs))
	for i, c := range cs {
		go func() {
			var b strings.Builder
			for k := range burstLines {
				fmt.Fprintf(&b, "c%d m%d\n", i, k)
			}
			_, err := c.c.Write([]byte(b.String()))
			errs <- err
		}()
	}
	for range cs {
		require.NoError(t, <-errs)
	}
	want := (len(cs) - 1) * burstLines
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range cs {
		for c.kind(kindLine) < want {
			c.mu.Lock()
			end, n, cut := c.end, c.kinds[kindLine], c.kinds[kindCut]
			c.mu.Unlock()
			require.True(t, end == nil && cut == 0 && time.Now().Before(deadline),
				"client %s: %d lines of %d; end %v; notices of disconnections %d", c.id, n, want, end, cut)
			time.Sleep(5 * time.Millisecond)
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for _, c := range cs {
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("client %s: no end of stream after SIGTERM", c.id)
		}
	}
	require.Equal(t, exitSuccess, waitExit(t, cmd, 30*time.Second), "stderr: %s", stderr)
	for i, c := range cs {
		next := make([]int, len(cs))
		for _, s := range c.got {
			_, text, _ := strings.Cut(s, ": ")
			switch lineKind(s) {
			case kindLine:
				from, k, err := parseLine(text)
				require.NoError(t, err, "client %s", c.id)
				require.True(t, from < len(cs) && from != i && k == next[from],
					"client %s (index %d): line %q out of place (want line %d of its sender)", c.id, i, text, next[from])
				next[from]++
			case kindCut:
				t.Fatalf("client %s: %q", c.id, s)
			}
		}
		for from, n := range next {
			if from != i {
				require.Equal(t, burstLines, n, "client %s: lines of client %d", c.id, from)
			}
		}
		require.Equal(t, chatBye, c.got[len(c.got)-1], "client %s: the last line", c.id)
	}
}
