package debugsrv

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jadevm/jade/jprof"
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
		sec := 30
		if s := r.URL.Query().Get("seconds"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 || n > maxProfileSeconds {
				http.Error(w, fmt.Sprintf("debugsrv: profile: seconds must be 1..%d", maxProfileSeconds), http.StatusBadRequest)
				return
			}
			sec = n
		}
		var buf bytes.Buffer
		p, err := jprof.StartCPU(tgt, &buf, jprof.Options{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		t := time.NewTimer(time.Duration(sec) * time.Second)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
		if err := p.Stop(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="jade-profile"`)
		w.Write(buf.Bytes())
	}
}
