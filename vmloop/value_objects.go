package vmloop

// EachObject calls f with the kind and runtime object of every task,
// event and ext value in v: v itself, or the elements of a ref array at
// any depth, in order. It stops, and returns false, when f returns false.
// Like every walk over a value it keeps its work on an explicit stack
// (see arrayString), and it copies nothing: a host checks what a value
// refers to before it crosses a boundary at no cost beyond the walk.
func (v Value) EachObject(f func(k Kind, obj any) bool) bool {
	switch v.kind {
	case KindTask, KindEvent, KindExt:
		return v.ext == nil || f(v.kind, v.ext)
	case KindArrayRef, KindMap:
	default:
		return true
	}
	type level struct {
		arr []Value
		i   int
	}
	st := []level{{arr: v.arr}}
	for len(st) > 0 {
		top := &st[len(st)-1]
		if top.i == len(top.arr) {
			st = st[:len(st)-1]
			continue
		}
		e := &top.arr[top.i]
		top.i++
		switch e.kind {
		case KindTask, KindEvent, KindExt:
			if e.ext != nil && !f(e.kind, e.ext) {
				return false
			}
		case KindArrayRef, KindMap:
			st = append(st, level{arr: e.arr})
		}
	}
	return true
}
