package jade_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// TestREADMEModuleProgram: the README's program that imports std links
// with the built-in standard library (from a directory with no std/ of
// its own), serves HTTP/1.1 with keep-alive on both backends, refuses a
// malformed request with 400, and its main ends at a drain.
func TestREADMEModuleProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "```jasm\n.import \"std/http\"")
	require.True(t, ok, "README.md has no jasm program importing std/http")
	src, _, ok := strings.Cut(".import \"std/http\""+rest, "```")
	require.True(t, ok)
	p, err := jasm.Link(filepath.Join(t.TempDir(), "hello.jasm"), []byte(src), jasm.LinkOptions{})
	require.NoError(t, err)
	require.NoError(t, vmloop.Verify(p, nil))
	testkit.Pollers(t, func(t *testing.T) {
		rt := testkit.ForcedRuntime(t, jade.Options{Workers: 1})
		require.NoError(t, rt.Verify(p))
		addr := testkit.FreeAddr(t)
		main, err := rt.Spawn(p, "main", vmloop.StrArray([]string{addr}))
		require.NoError(t, err)
		var c net.Conn
		testkit.WaitFor(t, func() bool {
			c, err = net.Dial("tcp", addr)
			return err == nil
		}, "the server does not accept")
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		hello := "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!"
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
		require.NoError(t, err)
		got := make([]byte, 2*len(hello))
		_, err = io.ReadFull(c, got)
		require.NoError(t, err)
		require.Equal(t, hello+hello, string(got))
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\n\r\n") // no Host
		require.NoError(t, err)
		got, err = io.ReadAll(c)
		require.NoError(t, err)
		require.Equal(t, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", string(got))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, rt.Close(ctx))
		o, err := main.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, sched.Failure, o.Kind, "main ends with the drain's ShutdownError: %s", o)
	})
}

// TestREADMEChannelProgram: the README's channel program ("How tasks
// talk") runs and returns the sum its comment gives.
func TestREADMEChannelProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "## How tasks talk")
	require.True(t, ok, "README.md has no \"How tasks talk\" section")
	_, rest, ok = strings.Cut(rest, "```\n")
	require.True(t, ok)
	src, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	rt, err := jade.New(jade.Options{Workers: 2})
	require.NoError(t, err)
	defer rt.Close(context.Background())
	p, err := rt.Load("talk.jasm", []byte(src))
	require.NoError(t, err)
	task, err := rt.Spawn(p, "main", vmloop.StrArray(nil))
	require.NoError(t, err)
	o, err := task.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(5050), o.Value.Int(), "%v", o)
}
