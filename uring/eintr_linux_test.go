//go:build linux

package uring

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/jadevm/jade/internal/evpoll"
)

// TestEpollWaitInterrupted: signals that interrupt the epoll backend's
// blocked wait (EINTR) neither panic nor end the Wait; it goes on waiting
// until the Wake. Both ways of waiting are run: epoll_pwait2, and the
// epoll_wait fallback of kernels before 5.11 and of qemu-user, where
// x/sys reports EINTR with a count of -1: taken as a count, it panics in
// Wait with the backend's lock held, and the worker's deferred Close then
// waits for that lock for ever (a worker lost without a trace).
func TestEpollWaitInterrupted(t *testing.T) {
	for _, pwait2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("pwait2=%v", pwait2), func(t *testing.T) {
			b, err := OpenEpoll(Options{}, "test")
			require.NoError(t, err)
			if pwait2 && !b.os.pwait2 {
				require.NoError(t, b.Close())
				t.Skip("epoll_pwait2 is ENOSYS here")
			}
			b.os.pwait2 = pwait2

			type result struct {
				n        int
				err      error
				panicked any
			}
			done := make(chan result, 1)
			tids := make(chan int, 1)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var r result
				defer func() {
					r.panicked = recover()
					done <- r
				}()
				tids <- unix.Gettid()
				var out [4]evpoll.Completion
				r.n, r.err = b.Wait(-1, out[:])
			}()
			tid := <-tids

			// Each signal that lands while the thread is blocked ends the
			// wait with EINTR, and Wait enters it again (one more syscall
			// counted). A signal that lands just before the block only runs
			// Go's handler, so keep sending until the count moves.
			var r result
			finished := false
			deadline := time.Now().Add(20 * time.Second)
			for i := 0; i < 3 && !finished; i++ {
				before := b.os.ctr.Syscalls.Load()
				for !finished && b.os.ctr.Syscalls.Load() == before {
					require.True(t, time.Now().Before(deadline), "the blocked wait was never interrupted")
					require.NoError(t, unix.Tgkill(unix.Getpid(), tid, unix.SIGURG))
					select {
					case r = <-done:
						finished = true
					case <-time.After(time.Millisecond):
					}
				}
			}
			require.False(t, finished, "Wait returned before the Wake: n=%d err=%v panic=%v", r.n, r.err, r.panicked)

			require.NoError(t, b.Wake())
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Wait did not return after the Wake")
			}
			require.Nil(t, r.panicked, "Wait panicked after EINTR")
			require.NoError(t, r.err)
			require.Zero(t, r.n)
			require.NoError(t, b.Close())
		})
	}
}
