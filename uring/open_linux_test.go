//go:build linux

package uring

import (
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/internal/feature"
	"golang.org/x/sys/unix"
)

func ringOrSkip(t *testing.T, o Options) *Ring {
	t.Helper()
	r, err := OpenRing(o)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			feature.Missing(t, "io_uring", err)
		}
		t.Fatal(err)
	}
	return r
}

// TestSelection: Options.Poller and JADE_POLLER force a backend; auto
// prefers io_uring and falls back to epoll when setup is refused.
func TestSelection(t *testing.T) {
	open := func(o Options) evpoll.Backend {
		t.Helper()
		b, err := Open(o)
		if err != nil {
			if Unavailable(err) {
				feature.Missing(t, "io_uring", err)
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	t.Setenv("JADE_POLLER", "epoll")
	if b := open(Options{}); b.Name() != "epoll" || !strings.Contains(b.(*Epoll).Reason(), "JADE_POLLER=epoll") {
		t.Fatalf("JADE_POLLER=epoll: %s", b.Name())
	}
	if b := open(Options{Poller: "uring"}); b.Name() != "io_uring" {
		t.Fatalf("Options.Poller=uring beats the environment: got %s", b.Name())
	}
	t.Setenv("JADE_POLLER", "uring")
	if b := open(Options{}); b.Name() != "io_uring" {
		t.Fatalf("JADE_POLLER=uring: %s", b.Name())
	}
	t.Setenv("JADE_POLLER", "")
	b := open(Options{})
	require.Equal(t, "io_uring", b.Name(), "auto on a kernel with io_uring: %s", b.Name())
	t.Logf("auto: %s", b.(*Ring).Reason())
	if _, err := Open(Options{Poller: "kqueue"}); err == nil {
		t.Fatal("unknown poller accepted")
	}

	for _, errno := range []unix.Errno{unix.ENOSYS, unix.EPERM, unix.EINVAL} {
		setupHook = func() error { return errno }
		b := open(Options{})
		if b.Name() != "epoll" || !strings.Contains(b.(*Epoll).Reason(), errno.Error()) {
			t.Errorf("fallback on %v: %s %q", errno, b.Name(), b.(*Epoll).Reason())
		}
		if _, err := Open(Options{Poller: "uring"}); !errors.Is(err, errno) {
			t.Errorf("forced uring with setup failing %v: err %v", errno, err)
		}
	}
	setupHook = func() error { return unix.EMFILE }
	if _, err := Open(Options{}); !errors.Is(err, unix.EMFILE) {
		t.Errorf("EMFILE must not fall back: %v", err)
	}
	setupHook = nil
}

// TestOwnerRingFlags: on a kernel with SINGLE_ISSUER/DEFER_TASKRUN (6.1+),
// an owner-thread ring takes the top rung of the ladder; a shared ring
// never sets them.
func TestOwnerRingFlags(t *testing.T) {
	runtimeLock(t)
	r := ringOrSkip(t, Options{OwnerThread: true})
	defer r.Close()
	t.Log(r.Reason())
	var uts unix.Utsname
	unix.Uname(&uts)
	if kernelAtLeast(uts.Release[:], 6, 1) && r.SetupFlags()&(setupSingleIssuer|setupDeferTaskrun) != setupSingleIssuer|setupDeferTaskrun {
		t.Errorf("kernel %s: owner ring flags %s", unix.ByteSliceToString(uts.Release[:]), setupFlagString(r.SetupFlags()))
	}
	s := ringOrSkip(t, Options{})
	defer s.Close()
	if s.SetupFlags()&(setupSingleIssuer|setupDeferTaskrun|setupCoopTaskrun) != 0 {
		t.Errorf("shared ring flags %s", setupFlagString(s.SetupFlags()))
	}
}

func kernelAtLeast(rel []byte, major, minor int) bool {
	parts := strings.SplitN(unix.ByteSliceToString(rel), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(parts[0])
	mi, _ := strconv.Atoi(strings.TrimLeftFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return ma > major || ma == major && mi >= minor
}

// TestSharedSubmitWhileWaiting (shared topology): ops submitted and
// cancelled by other goroutines while one goroutine blocks in Wait are
// started at once and complete exactly once. Run with -race.
func TestSharedSubmitWhileWaiting(t *testing.T) {
	for _, c := range backendCases {
		if c.opts.OwnerThread {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b := openCase(t, c, nil)
			defer b.Close()
			const workers, per = 4, 200
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < per; i++ {
						tok := evpoll.Token(w*per + i + 1)
						id, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, tok)
						if err != nil {
							t.Error(err)
							return
						}
						if i%7 == 0 {
							b.Cancel(id) // a NOP may already be done: either answer is fine
						}
						if i%50 == 0 {
							time.Sleep(time.Millisecond) // let the waiter block
						}
					}
				}()
			}
			seen := make(map[evpoll.Token]bool)
			var out [64]evpoll.Completion
			deadline := time.Now().Add(10 * time.Second)
			for len(seen) < workers*per && time.Now().Before(deadline) {
				n, err := b.Wait(time.Second, out[:])
				require.NoError(t, err)
				for _, c := range out[:n] {
					if seen[c.Token] {
						t.Fatalf("token %d twice", c.Token)
					}
					seen[c.Token] = true
				}
			}
			wg.Wait()
			if len(seen) != workers*per {
				t.Fatalf("%d of %d completions", len(seen), workers*per)
			}
		})
	}
}

// TestNoNetOrOSIO: the package never imports net, and imports os only for
// environment variables (DESIGN §2: uring/ never calls net or os I/O).
func TestNoNetOrOSIO(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "net", "net/http", "io/ioutil", "os/exec", "syscall":
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
	// os is allowed for Getenv only.
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, _ := parseSource(f)
		for _, use := range osUses(src) {
			if use != "Getenv" {
				t.Errorf("%s uses os.%s", f, use)
			}
		}
	}
}
