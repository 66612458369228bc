package jtrace

import "sync"

// Strings interns the strings events name (function and task names) as
// small numbers, so that an Event holds no pointer. Id 0 is "". Safe for
// concurrent use; writers cache what they looked up.
type Strings struct {
	mu   sync.Mutex
	ids  map[string]uint32 // guarded by mu
	list []string          // guarded by mu; list[id] is the string
	// lines maps the id of a function (Func) to its pcs' source
	// positions; guarded by mu.
	lines map[uint32]Lines
}

// Lines maps a pc of one function to its source file and line (line 0:
// unknown), for the trace's "file:line" locations.
type Lines func(pc int) (file string, line int)

// Func returns a new id naming function name, whose pcs lines maps to
// source lines (nil: none known). Unlike ID, it does not share ids: two
// programs may each have a function of that name.
func (t *Strings) Func(name string, lines Lines) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ids == nil {
		t.ids = map[string]uint32{}
		t.list = []string{""}
	}
	id := uint32(len(t.list))
	t.list = append(t.list, name)
	if lines != nil {
		if t.lines == nil {
			t.lines = map[uint32]Lines{}
		}
		t.lines[id] = lines
	}
	return id
}

// Lines returns the source lines of the function id names (Func), or nil.
func (t *Strings) Lines(id uint32) Lines {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lines[id]
}

// ID returns the id of s, adding it when new.
func (t *Strings) ID(s string) uint32 {
	if s == "" {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[s]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]uint32{}
		t.list = []string{""}
	}
	id := uint32(len(t.list))
	t.ids[s] = id
	t.list = append(t.list, s)
	return id
}

// Get returns the string of id ("" when unknown).
func (t *Strings) Get(id uint32) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if int(id) < len(t.list) {
		return t.list[id]
	}
	return ""
}

// Snapshot returns every string by id.
func (t *Strings) Snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.list == nil {
		return []string{""}
	}
	return append([]string(nil), t.list...)
}
