package jade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jadevm/jade/internal/errs"
	"github.com/jadevm/jade/sched"
)

// Close drains the runtime gracefully, for a server: it stops listening
// (every listening socket of a net.listen is closed, so new connections
// are refused; the connections already in its accept queue are still
// returned by net.accept, and then a waiting or later net.accept throws
// ShutdownError),
// then waits until every task has completed or ctx ends, and stops the
// workers. Tasks may still spawn meanwhile: the program finishes the
// connections it has and ends.
//
// At ctx's end the tasks still live are cancelled (with a one-second
// grace for them to unwind) and Close returns a *DrainError that lists
// them by engine and state, and names the first few with the file:line
// and what each waits for.
func (r *Runtime) Close(ctx context.Context) error {
	r.bus.StopListening()
	if err := r.bus.Drain(ctx); err != nil {
		s := r.bus.Scheduler()
		live := s.Tasks()
		// Best effort: the tasks the error lists, with what each waits
		// for in full (the workers stop for as long as it takes to read).
		_ = s.Detail(live, sched.MaxListedReports, 100*time.Millisecond)
		grace, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		derr := &DrainError{Cause: ctx.Err(), Live: live, Abandoned: r.bus.Shutdown(grace)}
		if perr := r.stopProfiles(); perr != nil {
			return errors.Join(derr, errs.Wrap("jade", "close", perr))
		}
		return derr
	}
	perr := r.stopProfiles() // after the drain: the profiles cover it
	r.bus.Shutdown(ctx)
	if perr != nil {
		return errs.Wrap("jade", "close", perr)
	}
	return nil
}

// DrainError is the error of a Close whose deadline came before the last
// task ended.
type DrainError struct {
	// Cause is the context's error (context.DeadlineExceeded or Canceled).
	Cause error
	// Live are the tasks still live at the deadline, which Close then
	// cancelled.
	Live []sched.TaskReport
	// Abandoned are those of Live that had not ended after the grace
	// period either (a host call that never returns, say).
	Abandoned []sched.TaskReport
}

func (e *DrainError) Error() string {
	s := fmt.Sprintf("jade: close: %v before the drain ended: cancelled %s", e.Cause, sched.SummarizeReports(e.Live, sched.MaxListedReports))
	if len(e.Abandoned) > 0 {
		s += fmt.Sprintf("; abandoned after the grace period: %s", sched.SummarizeReports(e.Abandoned, sched.MaxListedReports))
	}
	return s
}

// Unwrap returns the context's error.
func (e *DrainError) Unwrap() error { return e.Cause }
