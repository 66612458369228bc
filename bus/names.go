package bus

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// MaxTaskName bounds a task name in bytes: a longer name is cut there, at
// a rune boundary (it is a label in profiles and dumps, not data).
const MaxTaskName = 256

// Spawn starts a task running function fn of the verified program p in
// engine target (nil: the member's own engine) with JadeValue args.
func (m *Member) Spawn(target *Member, p *vmloop.Program, fn string, args ...vmloop.Value) (*sched.Task, error) {
	return m.spawn(target, "", p, fn, args...)
}

// SpawnNamed is Spawn naming the task name before it can run (see
// sched.Control.SetTaskName: the name labels its profile samples, shows
// in task dumps and reports; the tasks it spawns do not inherit it).
func (m *Member) SpawnNamed(target *Member, name string, p *vmloop.Program, fn string, args ...vmloop.Value) (*sched.Task, error) {
	return m.spawn(target, clipName(name), p, fn, args...)
}

// clipName returns a copy of name cut to at most MaxTaskName bytes, at a
// rune boundary. It copies even a short name: a name lives as long as its
// task's record, and a substring would pin its whole source (a 32 MiB
// string freed by the task, then no longer counted in any budget).
func clipName(name string) string {
	n := len(name)
	if n > MaxTaskName {
		n = MaxTaskName
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
	}
	return strings.Clone(name[:n])
}

// setTaskName is task.set_name: t names itself (a string; "" removes the
// name). The tasks it spawns do not inherit the name.
func (b *Bus) setTaskName(t *sched.Task, ex *vmloop.Exec, req *vmloop.Request) sched.Action {
	name, a, ok := stringArg0(ex, req)
	if !ok {
		return a
	}
	b.ctl.SetTaskName(t, clipName(name))
	return completeVoid(ex, sched.ActContinue)
}

// taskLabel names t in an error text: `task 5`, or `task 5 "name"` for a
// named task.
func taskLabel(t *sched.Task) string {
	if n := t.Name(); n != "" {
		return fmt.Sprintf("task %d %q", t.ID(), n)
	}
	return fmt.Sprintf("task %d", t.ID())
}
