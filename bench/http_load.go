package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The mixed HTTP load (scenario http_mixed): light GETs of / sent open
// loop at a fixed rate, each measured from the moment the schedule says
// it should have been sent (start + i / rate) to its response's last
// byte, so a stalled server cannot hide behind a client that waits for it
// (coordinated omission); and heavy connections that each request
// /work?ms=N back to back. What a server promises is measured on the
// light requests while the heavy ones keep its CPU busy.

// HTTPMixed is what one mixed run measured.
type HTTPMixed struct {
	Rate    int     `json:"rate"`    // light requests per second
	Heavy   int     `json:"heavy"`   // heavy connections
	HeavyMS int     `json:"heavyMs"` // CPU per heavy request
	Seconds float64 `json:"seconds"` // the measured window
	// Light are the light requests' latencies against their schedule;
	// LightDone and LightErrors count them.
	Light       Latencies `json:"light"`
	LightDone   int64     `json:"lightDone"`
	LightErrors int64     `json:"lightErrors"`
	// HeavyDone counts the heavy responses that completed in the window.
	HeavyDone   int64 `json:"heavyDone"`
	HeavyErrors int64 `json:"heavyErrors"`
	// FirstError is the first failure seen, if any.
	FirstError string `json:"firstError,omitempty"`
}

// HeavyPerSec is the heavy throughput in responses per second.
func (m HTTPMixed) HeavyPerSec() float64 {
	if m.Seconds <= 0 {
		return 0
	}
	return float64(m.HeavyDone) / m.Seconds
}

// lightConns is how many keep-alive connections carry the light load: a
// request waits for a free one only when that many are slower than the
// schedule, and its wait counts.
const lightConns = 64

// RunHTTPMixed runs the mixed load against addr: light GETs at rate per
// second and heavy connections requesting /work?ms=heavyMS, for warmup
// (not measured) and then dur.
func RunHTTPMixed(addr string, rate, heavy, heavyMS int, warmup, dur time.Duration) (HTTPMixed, error) {
	res := HTTPMixed{Rate: rate, Heavy: heavy, HeavyMS: heavyMS, Seconds: dur.Seconds()}
	if rate < 1 || heavy < 0 || heavyMS < 0 || heavyMS > MaxWorkMS {
		return res, fmt.Errorf("bench: http mixed: rate %d, heavy %d, ms %d: want rate >= 1, heavy >= 0, 0 <= ms <= %d", rate, heavy, heavyMS, MaxWorkMS)
	}
	var conns []*httpConn
	defer func() {
		for _, c := range conns {
			c.c.Close()
		}
	}()
	for range lightConns + heavy {
		c, err := dialHTTP(addr)
		if err != nil {
			return res, err
		}
		conns = append(conns, c)
	}
	start := time.Now()
	from, end := start.Add(warmup), start.Add(warmup+dur)
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr atomic.Pointer[string]
	fail := func(n *int64, err error) {
		atomic.AddInt64(n, 1)
		s := err.Error()
		firstErr.CompareAndSwap(nil, &s)
	}
	var wg sync.WaitGroup
	heavyPath := "/work?ms=" + strconv.Itoa(heavyMS)
	for _, c := range conns[lightConns:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if err := c.get(heavyPath); err != nil {
					fail(&res.HeavyErrors, err)
					return
				}
				if now := time.Now(); !now.Before(from) && now.Before(end) {
					atomic.AddInt64(&res.HeavyDone, 1)
				}
			}
		}()
	}
	jobs := make(chan time.Time, rate*int(warmup+dur+time.Second)/int(time.Second))
	for _, c := range conns[:lightConns] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for due := range jobs {
				if err := c.get("/"); err != nil {
					fail(&res.LightErrors, err)
					return
				}
				if !due.Before(from) {
					d := time.Since(due)
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}
		}()
	}
	period := time.Second / time.Duration(rate)
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * period)
		if !due.Before(end) {
			break
		}
		time.Sleep(time.Until(due))
		jobs <- due
	}
	close(jobs)
	wg.Wait()
	res.Light = Summarize(lat)
	res.LightDone = int64(len(lat))
	if p := firstErr.Load(); p != nil {
		res.FirstError = *p
	}
	return res, nil
}

// httpConn is a keep-alive client connection that sends one GET at a time
// and reads the whole response.
type httpConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialHTTP(addr string) (*httpConn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("bench: http: dial: %w", err)
	}
	return &httpConn{c: c, r: bufio.NewReaderSize(c, 4096)}, nil
}

// get requests path and reads the response; an error for anything but a
// 200 with a Content-Length body.
func (h *httpConn) get(path string) error {
	h.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(h.c, "GET "+path+" HTTP/1.1\r\nHost: bench\r\n\r\n"); err != nil {
		return fmt.Errorf("bench: http: GET %s: %w", path, err)
	}
	_, err := ReadHTTPResponse(h.r, 200)
	if err != nil {
		return fmt.Errorf("bench: http: GET %s: %w", path, err)
	}
	return nil
}

// ReadHTTPResponse reads one response with a Content-Length body from r
// and returns the body; an error when its status is not want.
func ReadHTTPResponse(r *bufio.Reader, want int) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("status line: %w", err)
	}
	f := bytes.Fields(line)
	if len(f) < 2 || !bytes.HasPrefix(f[0], []byte("HTTP/1.")) {
		return nil, fmt.Errorf("malformed status line %q", line)
	}
	code, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return nil, fmt.Errorf("malformed status line %q", line)
	}
	n := -1
	for {
		h, err := r.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if n < 0 {
		return nil, errors.New("response without Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	if code != want {
		return body, fmt.Errorf("status %d, want %d (body %q)", code, want, body)
	}
	return body, nil
}
