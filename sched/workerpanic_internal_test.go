package sched

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/feature"
)

// lockedPanicBackend is a backend whose Wait panics with its lock held and
// whose Close takes that lock, as a backend's Wait does when it slices its
// events by a count of -1 (epoll_wait's EINTR as x/sys returns it).
type lockedPanicBackend struct{ mu sync.Mutex }

func (b *lockedPanicBackend) Name() string { return "locked-panic" }
func (b *lockedPanicBackend) Submit(*evpoll.Op, evpoll.Token) (evpoll.OpID, error) {
	return 0, evpoll.ErrInvalidOp
}
func (b *lockedPanicBackend) Cancel(evpoll.OpID) error { return evpoll.ErrNotPending }
func (b *lockedPanicBackend) Wait(time.Duration, []evpoll.Completion) (int, error) {
	b.mu.Lock()
	panic("lockedPanicBackend: Wait failed with its lock held")
}
func (b *lockedPanicBackend) Wake() error         { return nil }
func (b *lockedPanicBackend) Pending() int        { return 0 }
func (b *lockedPanicBackend) Stats() evpoll.Stats { return evpoll.Stats{} }
func (b *lockedPanicBackend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return nil
}

// TestWorkerPanicIsNotHidden: a panic on a worker whose backend's lock is
// held ends the process with the panic's message. Were the deferred Close
// to run first, it would block on that lock: the panic never printed, the
// worker silently lost (its tasks never run, Shutdown waits for it until
// its deadline).
func TestWorkerPanicIsNotHidden(t *testing.T) {
	if os.Getenv("JADE_WORKER_PANIC_CHILD") == "1" {
		_, c, err := New(Config{Workers: 1, Dispatcher: nopDispatcher{},
			OpenIO: func(int) (evpoll.Backend, error) { return &lockedPanicBackend{}, nil }})
		require.NoError(t, err)
		require.NoError(t, c.Start()) // the idle worker parks in Wait at once
		time.Sleep(time.Minute)
		os.Exit(3) // not reached when the panic ends the process
	}
	feature.Exec(t, os.Args[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWorkerPanicIsNotHidden$")
	cmd.Env = append(os.Environ(), "JADE_WORKER_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung instead of panicking:\n%s", out)
	require.Error(t, err)
	require.Contains(t, string(out), "lockedPanicBackend: Wait failed with its lock held")
}
