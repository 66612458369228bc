package jade_test

import (
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goCmd runs the go command in dir for a module outside this one: no
// workspace, and none of the caller's GOFLAGS (a -race or -tags of the
// test run does not apply to it).
func goCmd(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The module in testdata/host stands for a Go host outside this module:
// with only the root package it embeds, registers intrinsics, spawns on
// two engines, messages a task, reads metrics and takes profiles and a
// trace.
func TestHostModuleNeedsOnlyTheRootPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second module (-short)")
	}
	dir := filepath.Join("testdata", "host")
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "main.go"), nil, parser.ImportsOnly)
	require.NoError(t, err)
	for _, im := range f.Imports {
		if p := strings.Trim(im.Path.Value, `"`); strings.HasPrefix(p, "github.com/jadevm/") {
			require.Equal(t, "github.com/jadevm/jade", p, "the host imports only the root package")
		}
	}
	out, err := goCmd(t, dir, "run", ".")
	require.NoError(t, err, out)
	require.Equal(t, strings.Join([]string{
		"add: Success 1765",
		"echo: Success 7",
		"spin: Success 3000000 spinner",
		"metrics: 2 workers, 2 engines, true",
		"engine: batch 5000 true",
		"profiles: true true true",
	}, "\n")+"\n", out)
}

// A host outside this module cannot import the packages that hold the way
// from a Runtime to its bus (internal/hostbus) or the backends' helpers.
func TestHostModuleCannotReachInternal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a second module (-short)")
	}
	root, err := filepath.Abs(".")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"main.go", "go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join("testdata", "host", name))
		if name == "go.sum" && os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		if name == "go.mod" {
			b = []byte(strings.Replace(string(b), "=> ../..", "=> "+root, 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "reach.go"), []byte(`package main

import "github.com/jadevm/jade/internal/hostbus"

var _ = hostbus.Bus
`), 0o644))
	out, err := goCmd(t, dir, "build", "-o", os.DevNull, ".")
	require.Error(t, err)
	require.Contains(t, out, "use of internal package github.com/jadevm/jade/internal/hostbus not allowed")
}

// reach walks every exported name of a package and collects the named
// types reachable from it through exported methods, fields, parameters
// and results, each with the path that reached it.
type reach struct {
	via map[string]string // type → how it was reached
}

func (r *reach) walk(t types.Type, path string) {
	switch t := t.(type) {
	case *types.Alias:
		r.walk(types.Unalias(t), path)
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() == nil {
			return
		}
		key := obj.Pkg().Path() + "." + obj.Name()
		if _, ok := r.via[key]; ok {
			return
		}
		r.via[key] = path
		for _, mt := range []types.Type{t, types.NewPointer(t)} {
			ms := types.NewMethodSet(mt)
			for i := range ms.Len() {
				if f := ms.At(i).Obj(); f.Exported() {
					r.walk(f.Type(), path+" → "+obj.Name()+"."+f.Name())
				}
			}
		}
		r.walk(t.Underlying(), path)
	case *types.Pointer:
		r.walk(t.Elem(), path)
	case *types.Slice:
		r.walk(t.Elem(), path)
	case *types.Array:
		r.walk(t.Elem(), path)
	case *types.Map:
		r.walk(t.Key(), path)
		r.walk(t.Elem(), path)
	case *types.Chan:
		r.walk(t.Elem(), path)
	case *types.Signature:
		for i := range t.Params().Len() {
			r.walk(t.Params().At(i).Type(), path)
		}
		for i := range t.Results().Len() {
			r.walk(t.Results().At(i).Type(), path)
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				r.walk(f.Type(), path+"."+f.Name())
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				r.walk(m.Type(), path+"."+m.Name())
			}
		}
	}
}

func reachable(t *testing.T, imp types.Importer, pkg string) map[string]string {
	t.Helper()
	p, err := imp.Import(pkg)
	require.NoError(t, err)
	r := &reach{via: map[string]string{}}
	for _, n := range p.Scope().Names() {
		if o := p.Scope().Lookup(n); o.Exported() {
			r.walk(o.Type(), p.Name()+"."+n)
		}
	}
	return r.via
}

// S-16 by construction: no exported path leads from a runtime to its
// scheduler's control. From the root package, a host reaches neither the
// bus, the scheduler, its records nor a task's VM context; from package
// bus (which makes the runtime and holds the control), no exported name
// returns the control, and the scheduler types it shows offer only
// observers.
func TestNoExportedPathToSchedulerControl(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module from source (-short)")
	}
	const mod = "github.com/jadevm/jade/"
	imp := importer.ForCompiler(token.NewFileSet(), "source", nil)

	root := reachable(t, imp, "github.com/jadevm/jade")
	for _, forbidden := range []string{"sched.Control", "sched.Scheduler", "sched.Engine", "sched.Task",
		"bus.Bus", "bus.Member", "vmloop.Exec", "vmloop.Budget"} {
		if via, ok := root[mod+forbidden]; ok {
			t.Errorf("the root package hands out %s (via %s)", forbidden, via)
		}
	}

	// sched.New makes a scheduler of one's own (the bus calls it); it is
	// not a way to a runtime's control.
	fromBus := reachable(t, imp, "github.com/jadevm/jade/bus")
	if via, ok := fromBus[mod+"sched.Control"]; ok {
		t.Errorf("package bus hands out sched.Control (via %s)", via)
	}
	// The scheduler's types that bus shows: observers only. A method that
	// changes scheduler state belongs on sched.Control; a new observer is
	// added here.
	observers := map[string][]string{
		"Scheduler": {"Detail", "Dispatches", "DumpTrace", "Engines", "ExecEngine", "ExecTask", "FlightRecorder",
			"IOBackend", "IOStats", "IdleWorkers", "LiveTasks", "Metrics", "Note", "Now", "Parks", "Pinned",
			"RequestSamples", "StartSampling", "StartTrace", "Steals", "StolenTimers", "StopSampling", "StopTrace",
			"Tasks", "TasksWithStacks", "WaitingTasks", "WorkerThreads", "Workers"},
		"Engine": {"BlockingCalls", "Config", "HasWheel", "ID", "InFlightIO", "Jobs", "LiveTasks", "MemoryBytes",
			"Name", "PendingTimers"},
		"Task": {"CancelRequested", "Done", "Engine", "ID", "InlineOutcome", "Name", "Outcome", "Program", "State",
			"Stats", "Where"},
	}
	p, err := imp.Import(mod + "sched")
	require.NoError(t, err)
	for name, allowed := range observers {
		if _, ok := fromBus[mod+"sched."+name]; !ok {
			continue
		}
		ms := types.NewMethodSet(types.NewPointer(p.Scope().Lookup(name).Type()))
		var extra []string
		for i := range ms.Len() {
			if m := ms.At(i).Obj().Name(); ms.At(i).Obj().Exported() && !slices.Contains(allowed, m) {
				extra = append(extra, m)
			}
		}
		sort.Strings(extra)
		require.Empty(t, extra, "sched.%s, reachable from package bus, has methods that are not observers: "+
			"make a mutation a method of sched.Control, or add an observer to this list", name)
	}
}
