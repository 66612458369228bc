package debugsrv

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jadevm/jade/internal/jprof"
)

// maxProfileSeconds bounds /debug/jade/profile?seconds=N.
const maxProfileSeconds = 3600

// serveProfile answers /debug/jade/profile?seconds=N (default 30): a CPU
// profile of the Jade code the scheduler runs for N seconds, in pprof's
// format (package jprof), as /debug/pprof/profile is one of the Go code:
// `go tool pprof http://ADDR/debug/jade/profile?seconds=10`. One profile
// at a time; a second request while one runs is answered 409.
func serveProfile(tgt jprof.Target) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sec, ok := seconds(w, r, "profile")
		if !ok {
			return
		}
		var buf bytes.Buffer
		p, err := jprof.StartCPU(tgt, &buf, jprof.Options{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		waitOrGone(r, sec)
		if err := p.Stop(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeProfile(w, "jade-profile", buf.Bytes())
	}
}

// serveHeapProfile answers /debug/jade/heap?seconds=N (default 30): the
// Jade heap bytes by allocation site (package jprof) allocated during N
// seconds and those of them still in use at the end, in pprof's format:
// `go tool pprof -sample_index=alloc_space http://ADDR/debug/jade/heap?seconds=10`.
// Sampling starts with the request (a heap profile sees only what is
// allocated while it runs) and is process-wide: a request while any heap
// profile runs is answered 409.
func serveHeapProfile(src jprof.EngineSource) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sec, ok := seconds(w, r, "heap profile")
		if !ok {
			return
		}
		p, err := jprof.StartHeap(src, 0)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		waitOrGone(r, sec)
		if err := p.Stop(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeProfile(w, "jade-heap", buf.Bytes())
	}
}

// seconds reads the request's seconds parameter (default 30), answering
// 400 to a bad one.
func seconds(w http.ResponseWriter, r *http.Request, what string) (int, bool) {
	s := r.URL.Query().Get("seconds")
	if s == "" {
		return 30, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxProfileSeconds {
		http.Error(w, fmt.Sprintf("debugsrv: %s: seconds must be 1..%d", what, maxProfileSeconds), http.StatusBadRequest)
		return 0, false
	}
	return n, true
}

// waitOrGone waits sec seconds, or until the client goes away.
func waitOrGone(r *http.Request, sec int) {
	t := time.NewTimer(time.Duration(sec) * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

func writeProfile(w http.ResponseWriter, name string, b []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Write(b)
}
