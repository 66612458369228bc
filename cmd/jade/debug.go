package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/debugsrv"
	"github.com/jadevm/jade/internal/hostbus"
)

// startDebug serves the debug endpoints on addr (if set) and dumps the
// tasks to stderr on SIGUSR1. The returned function stops both.
func startDebug(rt *jade.Runtime, addr string, stderr io.Writer) (stop func(), err error) {
	s := hostbus.Scheduler(rt)
	debugsrv.Publish("jade", s)
	var srv *http.Server
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("debug server: %w", err)
		}
		fmt.Fprintf(stderr, "jade: debug server on http://%s/debug/ (pprof, jade/profile, jade/trace, vars, metrics, tasks)\n", ln.Addr())
		srv = &http.Server{Handler: debugsrv.Handler(s)}
		go srv.Serve(ln)
	}
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	if len(dumpSignals) > 0 {
		signal.Notify(sig, dumpSignals...)
	}
	go func() {
		for {
			select {
			case <-sig:
				debugsrv.DumpTasks(stderr, s)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
		if srv != nil {
			srv.Shutdown(context.Background())
		}
	}, nil
}

// startProfiles starts a CPU profile (if cpu is set); the returned function
// stops it and writes a heap profile (if mem is set).
func startProfiles(cpu, mem string) (stop func(), err error) {
	var f *os.File
	if cpu != "" {
		if f, err = os.Create(cpu); err != nil {
			return nil, fmt.Errorf("cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("cpuprofile: %w", err)
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if mem != "" {
			if m, err := os.Create(mem); err == nil {
				pprof.WriteHeapProfile(m)
				m.Close()
			}
		}
	}, nil
}
