package vmloop

import "testing"

// TestStraightStaysInGo: by default a task whose entry function has no
// call and no backward branch is given to the Go loop (a cgo crossing
// would cost more than the C loop wins on at most len(Code) instructions);
// functions with a loop or a call, and SetNative(true), use the native loop.
func TestStraightStaysInGo(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"jade"}},
		itFib(0),
		itFn("str", "(ref)->ref", 2, "lds r1, 0; sconcat r1, r1, r0; ret r1"),
		itFn("fwd", "(i64)->i64", 1, "jgti r0, 0, pos; ldi r0, 0; pos: ret r0"),
		itFn("loop", "(i64)->i64", 1, "top: subi r0, r0, 1; jgti r0, 0, top; ret r0"),
		// No backward branch, but a caught throw jumps back to a handler
		// before its range: a loop all the same.
		itFn("catch", "(i64)->i64", 3,
			"h: subi r0, r0, 1; jeqi r0, 0, done; tb: lds r1, 0; newerr r2, r1; throw r2; te: done: ret r0",
			"tb, te, h, r2"),
	)
	for _, c := range []struct {
		fn       string
		args     []Value
		straight bool
	}{
		{"fib", []Value{I64(5)}, false},
		{"str", []Value{Str("!")}, true},
		{"fwd", []Value{I64(3)}, true},
		{"loop", []Value{I64(3)}, false},
		{"catch", []Value{I64(3)}, false},
	} {
		e := itStart(t, p, c.fn, c.args...)
		if got := p.Funcs[p.FuncIndex(c.fn)].straight; got != c.straight {
			t.Errorf("%s: straight %v, want %v", c.fn, got, c.straight)
		}
		if e.wantNative() == c.straight {
			t.Errorf("%s: by default wantNative %v", c.fn, e.wantNative())
		}
		e.SetNative(true)
		if !e.wantNative() {
			t.Errorf("%s: SetNative(true) does not use the native loop", c.fn)
		}
		e.SetNative(false)
		if e.wantNative() {
			t.Errorf("%s: SetNative(false) uses the native loop", c.fn)
		}
		f := itStart(t, p, c.fn, c.args...) // the default (auto) mode
		f.Free()
		f.NativeUsed() // after Free: no frames, must not panic
		f.Recycle()
		f.NativeUsed() // after Recycle: no program either
	}
}
