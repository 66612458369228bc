package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jadevm/jade/examples"
)

// The key-value store of `jade perf`'s kv scenario: examples/kv.jasm
// (StartJadeKV) and the same store in Go (StartGoKV): net/http, one map
// behind a mutex. Both serve
//
//	GET /k/KEY, HEAD  → 200 with the value, or 404
//	PUT /k/KEY        → 204 (411 without a Content-Length, 413 past 8 MiB)
//	DELETE /k/KEY     → 204
//
// with KEY the percent-decoded path after /k/, 1 to 1024 bytes (400, 414).

// KVMaxValue is the largest value both stores take (kv.jasm's default).
const KVMaxValue = 8 << 20

// StartJadeKV runs examples/kv.jasm like StartJadeEcho.
func StartJadeKV(workers int) (*EchoServer, error) {
	return startJadeServer("kv.jasm", examples.KV, workers)
}

// StartGoKV serves the store with net/http on a free loopback port.
func StartGoKV() (*EchoServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var (
		mu sync.Mutex
		m  = map[string][]byte{} // guarded by mu
	)
	h := func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.URL.Path, "/k/")
		switch {
		case !ok:
			http.NotFound(w, r)
			return
		case key == "":
			w.WriteHeader(http.StatusBadRequest)
			return
		case len(key) > 1024:
			w.WriteHeader(http.StatusRequestURITooLong)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			mu.Lock()
			v, found := m[key]
			mu.Unlock()
			if !found {
				w.Header().Set("Content-Length", "0")
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(v)))
			w.Write(v)
		case http.MethodPut:
			if r.ContentLength < 0 {
				w.WriteHeader(http.StatusLengthRequired)
				return
			}
			if r.ContentLength > KVMaxValue {
				w.WriteHeader(http.StatusRequestEntityTooLarge)
				return
			}
			v := make([]byte, r.ContentLength)
			if _, err := io.ReadFull(r.Body, v); err != nil {
				return
			}
			mu.Lock()
			m[key] = v
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		case http.MethodDelete:
			mu.Lock()
			delete(m, key)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}
	srv := &http.Server{Handler: http.HandlerFunc(h), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	go srv.Serve(l)
	return &EchoServer{Addr: l.Addr().String(), stop: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}}, nil
}

// KVPreload PUTs keys key0 ... key<keys-1>, each a value of size bytes,
// over one keep-alive connection, so that a GET-heavy load finds them.
func KVPreload(addr string, keys, size int) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("bench: kv preload: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	r := bufio.NewReader(c)
	v := strings.Repeat("v", size)
	for i := range keys {
		if _, err := fmt.Fprintf(c, "PUT /k/key%d HTTP/1.1\r\nHost: kv\r\nContent-Length: %d\r\n\r\n%s", i, size, v); err != nil {
			return fmt.Errorf("bench: kv preload: PUT key%d: %w", i, err)
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 204 ") {
			return fmt.Errorf("bench: kv preload: PUT key%d: %q, %v", i, line, err)
		}
		if line, err = r.ReadString('\n'); err != nil || line != "\r\n" { // net/http sends a Date
			for err == nil && line != "\r\n" {
				line, err = r.ReadString('\n')
			}
			if err != nil {
				return fmt.Errorf("bench: kv preload: PUT key%d: %w", i, err)
			}
		}
	}
	return nil
}

// KVWrkScript is a wrk Lua script of the kv scenario's mix: of each ten
// requests nine GET and one PUT (a value of size bytes) a key drawn
// uniformly from key0 ... key<keys-1> (all of them preloaded: every
// request succeeds).
func KVWrkScript(keys, size int) string {
	return fmt.Sprintf(`local keys = %d
local body = string.rep("v", %d)
request = function()
  local path = "/k/key" .. (math.random(keys) - 1)
  if math.random(10) == 1 then
    return wrk.format("PUT", path, {["Host"] = "kv"}, body)
  end
  return wrk.format("GET", path, {["Host"] = "kv"})
end
`, keys, size)
}
