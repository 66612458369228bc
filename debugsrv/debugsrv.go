// Package debugsrv exposes a running Jade runtime for people and tools: a
// read-only metrics snapshot published through expvar (/debug/vars), the
// live tasks by state and engine with the function@pc each published at its
// last safe point (/debug/tasks), Go's pprof handlers (/debug/pprof/) and
// a CPU profile of the Jade code (/debug/jade/profile, package jprof).
// Nothing here mutates the scheduler (S-16): a profile only asks the
// workers for samples.
package debugsrv

import (
	"encoding/json"
	"expvar"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"sort"
	"sync"

	"github.com/jadevm/jade/jprof"
	"github.com/jadevm/jade/sched"
)

// Source is what the server reads: the scheduler of a runtime
// (jade.Runtime.Bus().Scheduler()).
type Source interface {
	Metrics() sched.Metrics
	Tasks() []sched.TaskReport
}

var publishOnce sync.Map // name -> struct{}

// Publish makes the snapshot visible under name in expvar (/debug/vars).
// Publishing the same name twice keeps the first source (expvar names are
// global and cannot be replaced).
func Publish(name string, src Source) {
	if _, dup := publishOnce.LoadOrStore(name, struct{}{}); dup {
		return
	}
	expvar.Publish(name, expvar.Func(func() any { return src.Metrics() }))
}

// DumpTasks writes the live tasks grouped by state, then engine, one line
// each with id and function@pc (the SIGUSR1 dump of `jade run`).
func DumpTasks(w io.Writer, src Source) {
	ts := src.Tasks()
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].State != ts[j].State {
			return ts[i].State < ts[j].State
		}
		return ts[i].Engine < ts[j].Engine
	})
	m := src.Metrics()
	fmt.Fprintf(w, "jade: %d live tasks (%d runnable in queues, %d waiting), %d/%d workers active\n",
		m.LiveTasks, m.RunnableTasks, m.WaitingTasks, m.ActiveWorkers, len(m.Workers))
	for _, t := range ts {
		fmt.Fprintf(w, "  %-9s engine %-10s task %-8d at %s@%d\n", t.State, t.Engine, t.ID, t.Func, t.PC)
	}
}

// Handler serves /debug/pprof/, /debug/vars, /debug/tasks (text; add
// ?format=json for JSON), /debug/metrics (JSON snapshot) and, when src can
// be sampled (a *sched.Scheduler is a jprof.Target),
// /debug/jade/profile?seconds=N (a Jade CPU profile).
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	if tgt, ok := src.(jprof.Target); ok {
		mux.HandleFunc("/debug/jade/profile", serveProfile(tgt))
	}
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	mux.HandleFunc("/debug/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(src.Metrics())
	})
	mux.HandleFunc("/debug/tasks", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(src.Tasks())
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		DumpTasks(w, src)
	})
	return mux
}
