package examples_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
)

// The key-value store (kv.jasm, on std/http) on both backends at 1, 2
// and 4 workers: concurrent clients with a consistency check, large
// values, clients that leave mid-request, pipelining and a drain. The
// server's idle timeout is 2 s and its value limit 1.5 MB.

func TestKV(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
			s := startKV(t, workers, "1500000", "2000")
			t.Run("consistency", func(t *testing.T) { kvConsistency(t, s.addr) })
			t.Run("large values", func(t *testing.T) { kvLarge(t, s.addr) })
			t.Run("pipelining", func(t *testing.T) { kvPipelining(t, s.addr) })
			t.Run("refused", func(t *testing.T) { kvRefused(t, s.addr) })
			t.Run("keys", func(t *testing.T) { kvKeys(t, s.addr) })
			t.Run("disconnects", func(t *testing.T) { kvDisconnects(t, s) })
			s.waitLive(t, 2) // main and the store: every connection task ended
		})
	})
}

// startKV runs kv.jasm with the arguments after the address; the
// cleanup drains the runtime (a cancel of main would leave the store
// waiting for main's last message), and main must have returned 0.
func startKV(t *testing.T, workers int, args ...string) *ioServer {
	s := startServer(t, "kv.jasm", workers, args...)
	t.Cleanup(func() {
		if s.rt == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.rt.Close(ctx), "every task ended: the store too")
		o, err := s.main.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, sched.Success, o.Kind, "main: %s", o)
		s.rt, s.main = nil, nil
	})
	return s
}

// kvResp is one response.
type kvResp struct {
	code  int
	body  []byte
	close bool // Connection: close
}

// kvRead reads one response (a Content-Length body, or none for 204).
func kvRead(r *bufio.Reader) (kvResp, error) {
	var resp kvResp
	line, err := r.ReadString('\n')
	if err != nil {
		return resp, fmt.Errorf("status line: %w", err)
	}
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "HTTP/1.1" {
		return resp, fmt.Errorf("malformed status line %q", line)
	}
	if resp.code, err = strconv.Atoi(f[1]); err != nil {
		return resp, fmt.Errorf("malformed status line %q", line)
	}
	n := -1
	for {
		h, err := r.ReadString('\n')
		if err != nil {
			return resp, fmt.Errorf("header: %w", err)
		}
		h = strings.TrimRight(h, "\r\n")
		if h == "" {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		v = strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "content-length":
			if n, err = strconv.Atoi(v); err != nil {
				return resp, fmt.Errorf("bad Content-Length %q", v)
			}
		case "connection":
			resp.close = strings.EqualFold(v, "close")
		}
	}
	if resp.code == 204 {
		if n != -1 {
			return resp, errors.New("a 204 with a Content-Length")
		}
		return resp, nil
	}
	if n < 0 {
		return resp, fmt.Errorf("a %d without Content-Length", resp.code)
	}
	resp.body = make([]byte, n)
	if _, err := io.ReadFull(r, resp.body); err != nil {
		return resp, fmt.Errorf("body: %w", err)
	}
	return resp, nil
}

// kvClient is one keep-alive connection.
type kvClient struct {
	c net.Conn
	r *bufio.Reader
}

func kvDial(t testing.TB, addr string) *kvClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	return &kvClient{c: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// do sends one request for key (escaped here) and reads its response.
func (k *kvClient) do(method, key string, value []byte) (kvResp, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s /k/%s HTTP/1.1\r\nHost: kv\r\n", method, url.PathEscape(key))
	if value != nil {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(value))
	}
	b.WriteString("\r\n")
	b.Write(value)
	if _, err := k.c.Write(b.Bytes()); err != nil {
		return kvResp{}, fmt.Errorf("%s %q: write: %w", method, key, err)
	}
	resp, err := kvRead(k.r)
	if err != nil {
		return resp, fmt.Errorf("%s %q: %w", method, key, err)
	}
	return resp, nil
}

// kvConsistency: 200 clients at once, each on its own connection, PUT,
// GET and DELETE keys of their own and keys they share. A GET of an own
// key returns the last PUT the client had acknowledged (404 after a
// DELETE); a GET of a shared key returns a value some client PUT to that
// key, whole.
func kvConsistency(t *testing.T, addr string) {
	const clients, ops, shared = 200, 30, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		cl := kvDial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- kvClientRun(cl, i, ops, shared)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func kvClientRun(cl *kvClient, id, ops, shared int) error {
	rng := rand.New(rand.NewPCG(uint64(id), 38))
	own := map[string][]byte{} // the last acknowledged value; nil: deleted
	for op := range ops {
		key := fmt.Sprintf("c%d/%d", id, rng.IntN(3))
		if rng.IntN(4) == 0 {
			key = fmt.Sprintf("shared %d", rng.IntN(shared))
		}
		switch r := rng.IntN(10); {
		case r < 4:
			v := []byte(fmt.Sprintf("%s=%d.%d", key, id, op))
			if resp, err := cl.do("PUT", key, v); err != nil {
				return err
			} else if resp.code != 204 {
				return fmt.Errorf("PUT %q: status %d", key, resp.code)
			}
			own[key] = v
		case r < 5:
			if resp, err := cl.do("DELETE", key, nil); err != nil {
				return err
			} else if resp.code != 204 {
				return fmt.Errorf("DELETE %q: status %d", key, resp.code)
			}
			own[key] = nil
		default:
			resp, err := cl.do("GET", key, nil)
			if err != nil {
				return err
			}
			if strings.HasPrefix(key, "shared") {
				if resp.code == 200 && !bytes.HasPrefix(resp.body, []byte(key+"=")) {
					return fmt.Errorf("GET %q: %q, not a value of that key", key, resp.body)
				}
				if resp.code != 200 && resp.code != 404 {
					return fmt.Errorf("GET %q: status %d", key, resp.code)
				}
				continue
			}
			want, put := own[key]
			if want == nil {
				if resp.code != 404 {
					return fmt.Errorf("GET %q: status %d (%q), want 404 (put %v)", key, resp.code, resp.body, put)
				}
				continue
			}
			if resp.code != 200 || !bytes.Equal(resp.body, want) {
				return fmt.Errorf("GET %q: %d %q, want the last PUT %q", key, resp.code, resp.body, want)
			}
		}
	}
	return nil
}

// kvLarge: 1 MB values round-trip byte for byte, four clients at once;
// a value over the limit is refused with 413 and the connection closed.
func kvLarge(t *testing.T, addr string) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		cl := kvDial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := make([]byte, 1<<20)
			for j := range v {
				v[j] = byte(j*7 + i)
			}
			key := fmt.Sprintf("large %d", i)
			for range 2 {
				if resp, err := cl.do("PUT", key, v); err != nil || resp.code != 204 {
					errs <- fmt.Errorf("PUT %q: %d, %v", key, resp.code, err)
					return
				}
				resp, err := cl.do("GET", key, nil)
				if err != nil || resp.code != 200 || !bytes.Equal(resp.body, v) {
					errs <- fmt.Errorf("GET %q: %d, %d bytes, %v", key, resp.code, len(resp.body), err)
					return
				}
				v[0]++
			}
			if resp, err := cl.do("DELETE", key, nil); err != nil || resp.code != 204 {
				errs <- fmt.Errorf("DELETE %q: %d, %v", key, resp.code, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	cl := kvDial(t, addr)
	resp, err := cl.do("PUT", "too large", make([]byte, 1500001))
	if err == nil { // the server may close before it read the whole body
		require.Equal(t, 413, resp.code)
		require.True(t, resp.close)
	}
	resp, err = cl.do("GET", "too large", nil)
	require.Error(t, err, "closed after the 413")
	cl = kvDial(t, addr)
	resp, err = cl.do("GET", "too large", nil)
	require.NoError(t, err)
	require.Equal(t, 404, resp.code, "not stored")
}

// kvPipelining: requests written at once are answered in order.
func kvPipelining(t *testing.T, addr string) {
	c, r := rawConn(t, addr)
	write(t, c, "PUT /k/p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nfirst"+
		"GET /k/p HTTP/1.1\r\nHost: a\r\n\r\n"+
		"PUT /k/p HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nsecond"+
		"HEAD /k/p HTTP/1.1\r\nHost: a\r\n\r\n"+
		"GET /k/p HTTP/1.1\r\nHost: a\r\n\r\n"+
		"DELETE /k/p HTTP/1.1\r\nHost: a\r\n\r\n"+
		"GET /k/p HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	want := "HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst" +
		"HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecond" +
		"HTTP/1.1 204 No Content\r\n\r\n" +
		"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	require.Equal(t, want, readAll(t, r))
}

// kvRefused: malformed requests get a 400 and a clean close (a FIN,
// after the replies to the requests before them); other refusals.
func kvRefused(t *testing.T, addr string) {
	ok := "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
	bad := "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
	cases := []struct{ name, req, want string }{
		{"bad escape", "GET /k/a%zz HTTP/1.1\r\nHost: a\r\n\r\n", bad},
		{"empty key", "GET /k/ HTTP/1.1\r\nHost: a\r\n\r\n", bad},
		{"no host", "GET /k/a HTTP/1.1\r\n\r\n", bad},
		{"two lengths", "PUT /k/a HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", bad},
		{"bare CR", "GET /k/a HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", bad},
		{"NUL", "GET /k/a HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n", bad},
		{"after a good one", "GET /k/none HTTP/1.1\r\nHost: a\r\n\r\nGET /k/% HTTP/1.1\r\nHost: a\r\n\r\n", ok + bad},
		{"chunked", "PUT /k/a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			"HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"no length", "PUT /k/a HTTP/1.1\r\nHost: a\r\n\r\n",
			"HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"head too large", "GET /k/a HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("x", 9000) + "\r\n\r\n",
			"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"too many fields", "GET /k/a HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X: y\r\n", 100) + "\r\n",
			"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"other path", "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"other method", "POST /k/a HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
			"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, PUT, DELETE\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"unknown method", "BREW /k/a HTTP/1.1\r\nHost: a\r\n\r\n",
			"HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
		{"key over 1 KiB", "GET /k/" + strings.Repeat("%41", 1025) + " HTTP/1.1\r\nHost: a\r\n\r\n",
			"HTTP/1.1 414 URI Too Long\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, r := rawConn(t, addr)
			write(t, c, tc.req)
			require.Equal(t, tc.want, readAll(t, r))
		})
	}
}

// kvKeys: keys are any bytes, percent-decoded, up to 1 KiB; the query
// is not part of the key.
func kvKeys(t *testing.T, addr string) {
	cl := kvDial(t, addr)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	keys := []string{string(all), strings.Repeat("k", 1024), "a/b", "?", "%", " "}
	for _, k := range keys {
		resp, err := cl.do("PUT", k, []byte("v:"+k))
		require.NoError(t, err)
		require.Equal(t, 204, resp.code)
	}
	for _, k := range keys {
		resp, err := cl.do("GET", k, nil)
		require.NoError(t, err)
		require.Equal(t, 200, resp.code)
		require.Equal(t, "v:"+k, string(resp.body))
	}
	_, err := io.WriteString(cl.c, "GET /k/a%2Fb?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")
	require.NoError(t, err)
	resp, err := kvRead(cl.r)
	require.NoError(t, err)
	require.Equal(t, "v:a/b", string(resp.body))
	resp, err = cl.do("GET", "A", nil) // keys are case-sensitive
	require.NoError(t, err)
	require.Equal(t, 404, resp.code)
}

// kvDisconnects: clients that leave mid-head, mid-body, or reset, while
// another keeps being served; their connection tasks end.
func kvDisconnects(t *testing.T, s *ioServer) {
	good := kvDial(t, s.addr)
	reqs := []string{
		"GET /k/a HT",
		"PUT /k/gone HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\npartial",
		"PUT /k/gone HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n",
	}
	for i, req := range reqs {
		for _, reset := range []bool{false, true} {
			c := s.dial(t)
			_, err := io.WriteString(c, req)
			require.NoError(t, err)
			if reset {
				require.NoError(t, c.SetLinger(0))
			}
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			c.Close()
			resp, err := good.do("GET", "gone", nil)
			require.NoError(t, err)
			require.Equal(t, 404, resp.code, "a PUT whose body did not come is not stored")
		}
	}
	good.c.Close()
}

// TestKVDrain: at a drain an idle connection is closed, a request made
// during it is answered with "Connection: close", main returns 0, the
// store ends after the last connection and the runtime closes.
func TestKVDrain(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		testkit.Workers(t, []int{1, 2, 4}, func(t *testing.T, workers int) {
			s := startKV(t, workers)
			busy := kvDial(t, s.addr)
			resp, err := busy.do("PUT", "d", []byte("v"))
			require.NoError(t, err)
			require.Equal(t, 204, resp.code)
			// A client in the middle of a request: its body comes after
			// the drain began.
			_, err = io.WriteString(busy.c, "PUT /k/d HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nw")
			require.NoError(t, err)
			idle := kvDial(t, s.addr)
			resp, err = idle.do("GET", "d", nil)
			require.NoError(t, err)
			require.Equal(t, "v", string(resp.body))

			closed := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				closed <- s.rt.Close(ctx)
			}()
			o, err := s.main.Wait(context.Background())
			require.NoError(t, err)
			require.Equal(t, sched.Success, o.Kind, "main: %s", o)

			_, err = io.WriteString(busy.c, "2")
			require.NoError(t, err)
			resp, err = kvRead(busy.r)
			require.NoError(t, err)
			require.Equal(t, 204, resp.code)
			require.True(t, resp.close, "the last reply")
			_, err = busy.r.ReadByte()
			require.ErrorIs(t, err, io.EOF)

			// The idle connection: closed at the drain, or (when its
			// read was already waiting) served once more and closed.
			resp, err = idle.do("GET", "d", nil)
			if err == nil {
				require.Equal(t, "w2", string(resp.body))
				require.True(t, resp.close)
			}
			idle.c.Close()
			require.NoError(t, <-closed, "every task ended: the store too")
			s.rt, s.main = nil, nil
		})
	})
}

// TestKVStoreFull: past STORE_BYTES (here 1,000) a PUT is refused with
// 507 and stores nothing; a DELETE gives the room back, and a PUT that
// replaces a value is counted by the difference.
func TestKVStoreFull(t *testing.T) {
	testkit.Pollers(t, func(t *testing.T) {
		s := startKV(t, 1, "1000", "2000", "1000")
		cl := kvDial(t, s.addr)
		v := make([]byte, 400) // 400 + 1-byte key + 64 per entry
		for _, k := range []string{"a", "b"} {
			resp, err := cl.do("PUT", k, v)
			require.NoError(t, err)
			require.Equal(t, 204, resp.code, k)
		}
		resp, err := cl.do("PUT", "c", v)
		require.NoError(t, err)
		require.Equal(t, 507, resp.code, "930 + 465 bytes do not fit in 1,000")
		resp, err = cl.do("GET", "c", nil)
		require.NoError(t, err)
		require.Equal(t, 404, resp.code)
		resp, err = cl.do("PUT", "a", make([]byte, 450)) // replaces: 50 more
		require.NoError(t, err)
		require.Equal(t, 204, resp.code)
		resp, err = cl.do("DELETE", "b", nil)
		require.NoError(t, err)
		require.Equal(t, 204, resp.code)
		resp, err = cl.do("PUT", "c", v)
		require.NoError(t, err)
		require.Equal(t, 204, resp.code, "room again after the DELETE")
		resp, err = cl.do("GET", "a", nil)
		require.NoError(t, err)
		require.Len(t, resp.body, 450)
	})
}
