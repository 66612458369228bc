package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/sched"
)

// defaultDrainTimeout bounds a SIGTERM drain unless --drain-timeout says
// otherwise: below the 30 s a service manager (systemd's TimeoutStopSec,
// Kubernetes' terminationGracePeriodSeconds) usually waits before SIGKILL.
const defaultDrainTimeout = 20 * time.Second

// runMain spawns nothing itself: it watches the signals while task (main)
// runs and returns main's outcome and, when a drain ran, its error.
//
//   - SIGINT cancels main; a second SIGINT uses Go's default behaviour.
//   - SIGTERM drains (jade.Runtime.Close): listeners are closed, so main's
//     net.accept returns what was in the accept queue and then throws
//     ShutdownError, and the run ends when every task
//     has ended — main and the connections it was serving — or, at the
//     drain deadline or a second SIGTERM, with the rest cancelled.
//
// Without a drain, the run ends when main ends, the other tasks
// cancelled (grace: 2 s), as before.
func runMain(rt *jade.Runtime, task *jade.Task, sig chan os.Signal, drainTimeout time.Duration, stderr io.Writer) (sched.Outcome, error) {
	var (
		mu       sync.Mutex
		mainDone bool       // guarded by mu
		drained  chan error // non-nil once a drain began; guarded by mu
	)
	go func() {
		s, ok := <-sig
		if !ok {
			return
		}
		if s != syscall.SIGTERM {
			signal.Stop(sig)
			task.Cancel()
			return
		}
		mu.Lock()
		if mainDone {
			mu.Unlock()
			return
		}
		drained = make(chan error, 1)
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		defer cancel()
		go func() {
			select {
			case <-sig: // a second signal: stop waiting
				cancel()
			case <-ctx.Done():
			}
		}()
		fmt.Fprintf(stderr, "jade: SIGTERM: draining (listeners closed; waiting up to %v for the tasks to end)\n", drainTimeout)
		drained <- rt.Close(ctx)
	}()
	o, _ := task.Wait(context.Background())
	mu.Lock()
	mainDone = true
	ch := drained
	mu.Unlock()
	if ch != nil {
		return o, <-ch
	}
	signal.Stop(sig)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		printErr(stderr, err)
	}
	return o, nil
}
