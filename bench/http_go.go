package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The Go side of the HTTP scenarios: the routes of examples/http.jasm
// served by Go's net/http (a goroutine per connection) and by a minimal
// raw server (a goroutine per net.Conn, a hand-written HTTP/1.1 parser:
// the floor of what a Go server costs per request).
//
//	GET /            → 200, "Hello, World!" (13 bytes)
//	GET /work?ms=N   → 200, "worked N ms\n" after N ms of CPU: as many
//	                   clock reads as the server made in N ms alone when it
//	                   started (the Jade route calibrates the same way)

// HelloBody is the body of GET /.
const HelloBody = "Hello, World!"

// MaxWorkMS bounds /work's ms parameter.
const MaxWorkMS = 10_000

// Spin burns d of CPU: d's worth of clock reads at the rate measured by
// calibrateSpin (so it costs the same CPU however many spin at once,
// where a spin to a deadline would cost less CPU the more it shares).
func Spin(d time.Duration) {
	n := spinPerMS.Load() * d.Milliseconds()
	var last time.Time
	for range n {
		last = time.Now()
	}
	spinLast.Store(&last) // kept, so the reads are not dead code
}

var (
	spinPerMS atomic.Int64
	spinLast  atomic.Pointer[time.Time]
	spinOnce  sync.Once
)

// calibrateSpin measures how many clock reads a millisecond holds (the
// best of five 10 ms windows, the least disturbed one), once per process,
// before the first server starts.
func calibrateSpin() {
	spinOnce.Do(func() {
		var best int64
		for range 5 {
			var n int64
			end := time.Now().Add(10 * time.Millisecond)
			for time.Now().Before(end) {
				n++
			}
			best = max(best, n)
		}
		spinPerMS.Store(max(best/10, 1))
	})
}

// workMS parses /work's query: ms=N with 0 <= N <= MaxWorkMS.
func workMS(query string) (int, bool) {
	v, ok := strings.CutPrefix(query, "ms=")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > MaxWorkMS {
		return 0, false
	}
	return n, true
}

// StartGoHTTP serves the routes with net/http on a free loopback port.
func StartGoHTTP() (*EchoServer, error) {
	calibrateSpin()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, HelloBody)
	})
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		ms, ok := workMS(r.URL.RawQuery)
		if !ok {
			http.Error(w, "want /work?ms=N with 0 <= N <= 10000", http.StatusBadRequest)
			return
		}
		Spin(time.Duration(ms) * time.Millisecond)
		fmt.Fprintf(w, "worked %d ms\n", ms)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second}
	go srv.Serve(l)
	return &EchoServer{Addr: l.Addr().String(), stop: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}}, nil
}

// StartRawHTTP serves the routes from a goroutine per connection with a
// minimal HTTP/1.1 parser: keep-alive, pipelining, Content-Length bodies.
func StartRawHTTP() (*EchoServer, error) {
	calibrateSpin()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveRaw(c)
		}
	}()
	return &EchoServer{Addr: l.Addr().String(), stop: l.Close}, nil
}

var (
	rawHello    = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\n" + HelloBody)
	rawNotFound = []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
	rawBad      = []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
)

func serveRaw(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 8192)
	w := bufio.NewWriterSize(c, 8192)
	for {
		req, err := readRawRequest(r)
		if err != nil {
			if err != io.EOF {
				w.Write(rawBad)
				w.Flush()
			}
			return
		}
		switch {
		case req.path == "/":
			w.Write(rawHello)
		case strings.HasPrefix(req.path, "/work?"):
			ms, ok := workMS(req.path[len("/work?"):])
			if !ok {
				w.Write(rawBad)
				w.Flush()
				return
			}
			Spin(time.Duration(ms) * time.Millisecond)
			body := fmt.Sprintf("worked %d ms\n", ms)
			fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		default:
			w.Write(rawNotFound)
		}
		// Flush once the pipelined requests already read are answered.
		if r.Buffered() == 0 || req.close {
			if w.Flush() != nil || req.close {
				return
			}
		}
	}
}

type rawRequest struct {
	path  string
	close bool
}

// readRawRequest reads one request head (and discards a Content-Length
// body); io.EOF at a clean end between requests.
func readRawRequest(r *bufio.Reader) (rawRequest, error) {
	var req rawRequest
	line, err := r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(line) == 0 {
			return req, io.EOF
		}
		return req, fmt.Errorf("request line: %w", err)
	}
	f := bytes.Fields(line)
	if len(f) != 3 || !bytes.HasPrefix(f[2], []byte("HTTP/1.")) {
		return req, fmt.Errorf("malformed request line %q", line)
	}
	req.path = string(f[1])
	req.close = string(f[2]) == "HTTP/1.0"
	body := 0
	for {
		h, err := r.ReadSlice('\n')
		if err != nil {
			return req, fmt.Errorf("header: %w", err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return req, fmt.Errorf("malformed header %q", h)
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if body, err = strconv.Atoi(string(v)); err != nil || body < 0 {
				return req, fmt.Errorf("bad Content-Length %q", v)
			}
		case bytes.EqualFold(k, []byte("Connection")):
			req.close = bytes.EqualFold(v, []byte("close")) || (req.close && !bytes.EqualFold(v, []byte("keep-alive")))
		}
	}
	if _, err := r.Discard(body); err != nil {
		return req, fmt.Errorf("body: %w", err)
	}
	return req, nil
}
