// Package debugsrv exposes a running Jade runtime for people and tools: a
// read-only metrics snapshot published through expvar (/debug/vars: the
// latency histograms, worker times and counters of sched.Metrics), the
// live tasks by state and engine with their names, statistics and Jade
// stacks (/debug/tasks), Go's pprof handlers (/debug/pprof/) and a CPU
// profile of the Jade code (/debug/jade/profile, package jprof) and the
// scheduler's event trace (/debug/jade/trace, package jtrace). Nothing
// here mutates the scheduler (S-16): a profile only asks the workers for
// samples, and a task dump stops them for as long as it reads the stacks.
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
	"time"

	"github.com/jadevm/jade/internal/jprof"
	"github.com/jadevm/jade/sched"
)

// Source is what the server reads: the scheduler of a runtime
// (the scheduler under a jade.Runtime).
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

// StackSource is a Source that can also list the tasks with their Jade
// stacks (a *sched.Scheduler: TasksWithStacks stops the world while it
// reads them).
type StackSource interface {
	TasksWithStacks(timeout time.Duration) ([]sched.TaskReport, error)
}

// StackTimeout bounds how long a dump waits for the workers to stop so
// that it can read the tasks' stacks; past it the dump lists the tasks
// without stacks.
const StackTimeout = time.Second

// tasks lists src's tasks, with their stacks when src can give them.
func tasks(src Source) ([]sched.TaskReport, error) {
	if ss, ok := src.(StackSource); ok {
		ts, err := ss.TasksWithStacks(StackTimeout)
		if err == nil {
			return ts, nil
		}
		return src.Tasks(), err
	}
	return src.Tasks(), nil
}

// DumpTasks writes the live tasks grouped by state, then engine, one line
// each with id, name, file:line (function@pc without line information),
// what a Waiting task waits for (sched.Wait) and statistics, then each
// task's Jade stack with file:line when src can give it (the SIGUSR1
// dump of `jade run`).
func DumpTasks(w io.Writer, src Source) {
	ts, err := tasks(src)
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].State != ts[j].State {
			return ts[i].State < ts[j].State
		}
		return ts[i].Engine < ts[j].Engine
	})
	m := src.Metrics()
	fmt.Fprintf(w, "jade: %d live tasks (%d runnable in queues, %d waiting), %d/%d workers active\n",
		m.LiveTasks, m.RunnableTasks, m.WaitingTasks, m.ActiveWorkers, len(m.Workers))
	if err != nil {
		fmt.Fprintf(w, "jade: no stacks: %v\n", err)
	}
	for _, t := range ts {
		fmt.Fprintf(w, "  %-9s engine %-10s task %-8d", t.State, t.Engine, t.ID)
		if t.Name != "" {
			fmt.Fprintf(w, " %q", t.Name)
		}
		fmt.Fprintf(w, " at %s", t.Loc())
		if t.Wait != nil {
			fmt.Fprintf(w, " %s", t.Wait)
		}
		if st := t.Stats; st != nil {
			fmt.Fprintf(w, " (%d slices, %d reductions, %s runnable)", st.Slices, st.Reductions, time.Duration(st.RunnableNs))
		}
		fmt.Fprintln(w)
		for _, f := range t.Stack {
			fmt.Fprintf(w, "      %s\n", f)
		}
	}
}

// Handler serves /debug/pprof/, /debug/vars, /debug/tasks (text; add
// ?format=json for JSON), /debug/metrics (JSON snapshot) and, when src can
// be sampled (a *sched.Scheduler is a jprof.Target and a
// jprof.EngineSource), /debug/jade/profile?seconds=N (a Jade CPU profile)
// and /debug/jade/heap?seconds=N (a Jade heap profile), and when it can
// be traced (a Tracer), /debug/jade/trace (the flight recorder's dump,
// or ?seconds=N for a full trace of N seconds; Chrome trace-event JSON).
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	if tgt, ok := src.(jprof.Target); ok {
		mux.HandleFunc("/debug/jade/profile", serveProfile(tgt))
	}
	if es, ok := src.(jprof.EngineSource); ok {
		mux.HandleFunc("/debug/jade/heap", serveHeapProfile(es))
	}
	if tr, ok := src.(Tracer); ok {
		mux.HandleFunc("/debug/jade/trace", serveTrace(tr))
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
			ts, _ := tasks(src) // without stacks if the workers did not stop
			json.NewEncoder(w).Encode(ts)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		DumpTasks(w, src)
	})
	return mux
}
