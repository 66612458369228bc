package debugsrv

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// maxTraceSeconds bounds /debug/jade/trace?seconds=N.
const maxTraceSeconds = 300

// Tracer is a Source whose scheduler events can be dumped and traced (a
// *sched.Scheduler).
type Tracer interface {
	DumpTrace(w io.Writer) error
	StartTrace(w io.Writer) error
	StopTrace() error
}

// serveTrace answers /debug/jade/trace: the flight recorder's last events
// of every worker, or with ?seconds=N a full trace of the next N
// seconds, as Chrome trace-event JSON (open it in ui.perfetto.dev). A
// dump with the flight recorder off, or a second trace while one runs, is
// answered 409.
func serveTrace(tr Tracer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if s := r.URL.Query().Get("seconds"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 || n > maxTraceSeconds {
				http.Error(w, fmt.Sprintf("debugsrv: trace: seconds must be 1..%d", maxTraceSeconds), http.StatusBadRequest)
				return
			}
			if err := tr.StartTrace(&buf); err != nil {
				http.Error(w, err.Error(), http.StatusConflict)
				return
			}
			t := time.NewTimer(time.Duration(n) * time.Second)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
			if err := tr.StopTrace(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		} else if err := tr.DumpTrace(&buf); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="jade-trace.json"`)
		w.Write(buf.Bytes())
	}
}
