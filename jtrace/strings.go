package jtrace

import "sync"

// Strings interns the strings events name (function and task names) as
// small numbers, so that an Event holds no pointer. Id 0 is "". Safe for
// concurrent use; writers cache what they looked up.
type Strings struct {
	mu   sync.Mutex
	ids  map[string]uint32 // guarded by mu
	list []string          // guarded by mu; list[id] is the string
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
