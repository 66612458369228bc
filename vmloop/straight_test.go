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
	}
}
