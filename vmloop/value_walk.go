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
	if v.kind != KindArrayRef {
		writeNums(&sb, v)
		return sb.String()
	}
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
		case KindArrayI64, KindArrayF64:
			writeNums(&sb, *e)
		case KindArrayRef:
			sb.WriteByte('[')
			st = append(st, level{arr: e.arr})
		default:
			sb.WriteString(e.String())
		}
	}
	return sb.String()
}

// writeNums renders an i64 or f64 array value as "[e0, e1, ...]".
func writeNums(sb *strings.Builder, v Value) {
	ek := elemKind(v.kind)
	sb.WriteByte('[')
	for i, bits := range v.nums() {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(Value{kind: ek, bits: bits}.String())
	}
	sb.WriteByte(']')
}
