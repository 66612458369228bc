package vmloop

import (
	"strconv"
	"strings"
)

// arrayString renders an array value as "[e0, e1, ...]", strings quoted
// and nested arrays in brackets. Like every walk over a value it keeps
// its work on an explicit stack: values nest as deep as a task heap
// allows, far deeper than a recursion per level fits on a goroutine
// stack (see heap_copy.go).
func (v Value) arrayString() string {
	type level struct {
		arr []Value
		i   int
	}
	var sb strings.Builder
	sb.WriteByte('[')
	st := []level{{arr: v.arr}}
	for len(st) > 0 {
		top := &st[len(st)-1]
		if top.i == len(top.arr) {
			sb.WriteByte(']')
			st = st[:len(st)-1]
			continue
		}
		e := &top.arr[top.i]
		if top.i > 0 {
			sb.WriteString(", ")
		}
		top.i++
		switch e.kind {
		case KindString:
			sb.WriteString(strconv.Quote(e.str))
		case KindArrayI64, KindArrayF64, KindArrayRef:
			sb.WriteByte('[')
			st = append(st, level{arr: e.arr})
		default:
			sb.WriteString(e.String())
		}
	}
	return sb.String()
}
