package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/hostbus"
)

// startTrace records a full trace of the run to path (if set) and, while
// the flight recorder is on, dumps it to a file on SIGUSR2 (Unix). The
// returned function stops both and writes the trace; only its first
// call does anything.
func startTrace(rt *jade.Runtime, path string, stderr io.Writer) (stop func() error, err error) {
	var f *os.File
	if path != "" {
		if f, err = os.Create(path); err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		if err := rt.Observe().StartTrace(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("trace: %w", err)
		}
	}
	sig := make(chan os.Signal, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	if len(traceSignals) > 0 && hostbus.Scheduler(rt).FlightRecorder() {
		signal.Notify(sig, traceSignals...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-sig:
					if p, err := rt.Observe().DumpFlight(); err != nil {
						printErr(stderr, err) // "jade: dump flight: ..."
					} else {
						fmt.Fprintf(stderr, "jade: flight recorder dumped to %s (open it in ui.perfetto.dev)\n", p)
					}
				case <-done:
					return
				}
			}
		}()
	}
	var once sync.Once
	var serr error
	return func() error {
		once.Do(func() {
			signal.Stop(sig)
			close(done)
			wg.Wait()
			if f == nil {
				return
			}
			if err := rt.Observe().StopTrace(); err != nil {
				serr = fmt.Errorf("trace: %w", err)
			}
			if err := f.Close(); err != nil && serr == nil {
				serr = fmt.Errorf("trace: %w", err)
			}
		})
		return serr
	}, nil
}
