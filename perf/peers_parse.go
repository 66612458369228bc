package perf

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
)

// PeerLine is one line a peer program prints (bench/peers): one shape's
// figures, measured in the peer's own process with its own clock.
type PeerLine struct {
	Peer    string `json:"peer"`    // "tokio" or "beam"
	Shape   string `json:"shape"`   // a peer shape name (peerShapes)
	Workers int    `json:"workers"` // Tokio worker threads (1: current_thread), BEAM schedulers
	N       int    `json:"n"`       // the shape's count: iterations, rounds, waiters or ticks
	// NS is ns per unit of a throughput shape.
	NS *float64 `json:"ns,omitempty"`
	// HeapBytes and RSSBytes are the parked shape's figures per waiter: the
	// runtime's own accounting (Tokio: counted allocations; BEAM:
	// erlang:memory(processes)) and the resident set.
	HeapBytes *float64 `json:"heap_bytes,omitempty"`
	RSSBytes  *float64 `json:"rss_bytes,omitempty"`
	// Ran is the number of samples of a latency shape; below N when the
	// run hit its bound (a starved fairness ticker).
	Ran  *int     `json:"ran,omitempty"`
	P50  *float64 `json:"p50_ns,omitempty"`
	P99  *float64 `json:"p99_ns,omitempty"`
	P999 *float64 `json:"p999_ns,omitempty"`
	Max  *float64 `json:"max_ns,omitempty"`
	// BoundMS is the fairness run's time bound.
	BoundMS float64 `json:"bound_ms,omitempty"`
}

// Fields returns the line's figures by field name ("ns", "heap_bytes",
// "rss_bytes", "p50_ns", "p99_ns", "p999_ns", "max_ns"), the ones present.
func (l PeerLine) Fields() map[string]float64 {
	m := map[string]float64{}
	for k, p := range map[string]*float64{"ns": l.NS, "heap_bytes": l.HeapBytes, "rss_bytes": l.RSSBytes,
		"p50_ns": l.P50, "p99_ns": l.P99, "p999_ns": l.P999, "max_ns": l.Max} {
		if p != nil {
			m[k] = *p
		}
	}
	return m
}

// shapeKind says which fields a shape's line must carry.
func shapeKind(shape string) (kind string, ok bool) {
	switch shape {
	case "spawn_join", "ping_pong", "yield", "spawn_many", "chained_spawn", "yield_many",
		"chan_ping_pong", "chan_ping_pong_w2", "chan_stream", "chan_stream_w2", "chan_fan_in", "chan_fan_in_w2", "select4":
		return "throughput", true
	case "parked":
		return "memory", true
	case "wake_latency", "sleep_lateness", "fairness_timer":
		return "latency", true
	}
	return "", false
}

// ParsePeerOutput reads a peer's stdout: every line that starts with '{'
// must be a valid PeerLine of peer with the fields its shape calls for;
// other lines (an emulator's notices) are returned as noise.
func ParsePeerOutput(r io.Reader, peer string) (lines []PeerLine, noise []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for no := 1; sc.Scan(); no++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if !strings.HasPrefix(text, "{") {
			noise = append(noise, text)
			continue
		}
		l, err := parsePeerLine([]byte(text), peer)
		if err != nil {
			return nil, noise, fmt.Errorf("perf: %s output line %d: %w", peer, no, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, noise, fmt.Errorf("perf: %s output: %w", peer, err)
	}
	return lines, noise, nil
}

func parsePeerLine(b []byte, peer string) (PeerLine, error) {
	// Fields this parser does not read (a peer's informative extras, such
	// as hog_units_per_s) are ignored.
	var l PeerLine
	if err := json.Unmarshal(b, &l); err != nil {
		return l, err
	}
	if l.Peer != peer {
		return l, fmt.Errorf("peer %q, want %q", l.Peer, peer)
	}
	kind, ok := shapeKind(l.Shape)
	if !ok {
		return l, fmt.Errorf("unknown shape %q", l.Shape)
	}
	if l.Workers < 1 || l.N < 1 {
		return l, fmt.Errorf("%s: workers %d, n %d: both must be >= 1", l.Shape, l.Workers, l.N)
	}
	for k, v := range l.Fields() {
		if math.IsNaN(v) || math.IsInf(v, 0) || (k != "rss_bytes" && v < 0) {
			return l, fmt.Errorf("%s: %s = %v", l.Shape, k, v)
		}
	}
	switch kind {
	case "throughput":
		if l.NS == nil {
			return l, fmt.Errorf("%s: no ns", l.Shape)
		}
	case "memory":
		if l.HeapBytes == nil || l.RSSBytes == nil {
			return l, fmt.Errorf("%s: heap_bytes and rss_bytes are required", l.Shape)
		}
	case "latency":
		if l.Ran == nil || *l.Ran < 0 || *l.Ran > l.N {
			return l, fmt.Errorf("%s: ran missing or outside 0..n", l.Shape)
		}
		all := l.P50 != nil && l.P99 != nil && l.P999 != nil && l.Max != nil
		none := l.P50 == nil && l.P99 == nil && l.P999 == nil && l.Max == nil
		if *l.Ran > 0 && !all || *l.Ran == 0 && !none {
			return l, fmt.Errorf("%s: ran %d: percentiles are present exactly when samples are", l.Shape, *l.Ran)
		}
	}
	return l, nil
}

var lockVersion = regexp.MustCompile(`(?m)^name = "tokio"\s*\nversion = "([^"]+)"`)

// TokioVersion returns the tokio version a Cargo.lock resolved.
func TokioVersion(lock []byte) (string, error) {
	m := lockVersion.FindSubmatch(lock)
	if m == nil {
		return "", fmt.Errorf("perf: Cargo.lock: no tokio package")
	}
	return string(m[1]), nil
}
