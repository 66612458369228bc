package sched

// records is an owner-only table of values named by a uint32 index, with
// a free list threaded through the vacant slots: a worker's timers and its
// in-flight I/O operations hand these indexes to the timer wheel and the
// completion backend as payloads and tokens (never Go pointers).
type records[T any] struct {
	slots []record[T]
	free  uint32 // index+1 of the first vacant slot; 0 when none
}

type record[T any] struct {
	v    T
	next uint32 // free list link while vacant (index+1; 0 ends)
}

// put stores v and returns its index.
func (r *records[T]) put(v T) uint32 {
	if r.free != 0 {
		i := r.free - 1
		r.free = r.slots[i].next
		r.slots[i] = record[T]{v: v}
		return i
	}
	r.slots = append(r.slots, record[T]{v: v})
	return uint32(len(r.slots) - 1)
}

// take returns the value at i and frees its slot (dropping the reference).
func (r *records[T]) take(i uint32) T {
	v := r.slots[i].v
	r.slots[i] = record[T]{next: r.free}
	r.free = i + 1
	return v
}
