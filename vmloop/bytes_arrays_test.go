package vmloop

import (
	"strings"
	"testing"
)

// itBytes is a program with byte-buffer helpers: mk(n) makes a buffer of n
// bytes where b[i] = i & 255.
func itBytesFns() []Function {
	return []Function{
		itFn("mk", "(i64)->ref", 4, `
			bnew r1, r0
			ldi r2, 0
			jmp test
		loop:
			bset r1, r2, r2
			addi r2, r2, 1
		test:
			jlt r2, r0, loop
			ret r1`),
	}
}

// TestBytes covers bnew, blen, bget, bset, bcopy, bslice, bfind, beq, stob
// and btos.
func TestBytes(t *testing.T) {
	fns := append(itBytesFns(),
		// ops(n) exercises everything on a buffer of n bytes
		itFn("ops", "(i64)->ref", 12, `
			movi r1, r0
			call r1, 1, 0       # r1 = mk(n)
			blen r2, r1         # r2 = n
			ldi r3, 5
			bget r4, r1, r3     # r4 = 5
			ldi r5, 300
			bset r1, r3, r5     # b[5] = 300 & 255 = 44
			bget r6, r1, r3
			ldi r7, 2
			bslice r8, r1, r7, r3   # r8 = b[2:5] = 2 3 4
			ldi r9, 0
			bfind r10, r1, r8, r9   # 2
			beq r11, r8, r8         # 1
			add r4, r4, r6      # 5 + 44
			add r4, r4, r10     # + 2
			add r4, r4, r11     # + 1
			add r4, r4, r2      # + n
			itos r0, r4
			ret r0`),
		itFn("cp", "()->ref", 8, `
			ldi r0, 10
			call r0, 1, 0       # r0 = mk(10) = 0..9
			ldi r1, 2; ldi r2, 0; ldi r3, 5
			bcopy r0, r1, r0, r2, r3   # overlapping: b[2:7] = b[0:5]
			ret r0`),
		itFn("cpdown", "()->ref", 8, `
			ldi r0, 10
			call r0, 1, 0
			ldi r1, 0; ldi r2, 3; ldi r3, 7
			bcopy r0, r1, r0, r2, r3   # b[0:7] = b[3:10]
			ret r0`),
		itFn("str", "()->ref", 6, `
			lds r0, 0
			stob r1, r0
			ldi r2, 0; ldi r3, 104      # 'h'
			bset r1, r2, r3
			btos r4, r1
			ret r4`),
		itFn("find", "(ref,ref,i64)->i64", 4, "bfind r3, r0, r1, r2; ret r3"),
		itFn("eq", "(ref,ref)->i64", 3, "beq r2, r0, r1; ret r2"),
		itFn("get", "(ref,i64)->i64", 3, "bget r2, r0, r1; ret r2"),
		itFn("set", "(ref,i64)->ref", 3, "bset r0, r1, r1; ret r0"),
		itFn("slice", "(ref,i64,i64)->ref", 4, "bslice r3, r0, r1, r2; ret r3"),
		itFn("copy", "(ref,i64,ref,i64,i64)->ref", 5, "bcopy r0, r1, r2, r3, r4; ret r0"),
		itFn("new", "(i64)->ref", 2, "bnew r1, r0; ret r1"),
	)
	p := itProg(t, &Program{KStr: []string{"jade"}}, fns...)

	if sig, e := itCall(t, p, "ops", I64(100)); sig != SigCompleted || e.Result().String() != "152" {
		t.Errorf("ops(100) = %v %v %v", sig, e.Result(), e.Trap())
	}
	if sig, e := itCall(t, p, "cp"); sig != SigCompleted || string(e.Result().BytesData()) != "\x00\x01\x00\x01\x02\x03\x04\x07\x08\x09" {
		t.Errorf("overlapping bcopy = %v %q", sig, e.Result().BytesData())
	}
	if sig, e := itCall(t, p, "cpdown"); sig != SigCompleted || string(e.Result().BytesData()) != "\x03\x04\x05\x06\x07\x08\x09\x07\x08\x09" {
		t.Errorf("overlapping bcopy down = %v %q", sig, e.Result().BytesData())
	}
	if sig, e := itCall(t, p, "str"); sig != SigCompleted || e.Result().Kind() != KindString || e.Result().String() != "hade" {
		t.Errorf("stob/btos = %v %v", sig, e.Result())
	}

	B := func(s string) Value { return Bytes([]byte(s)) }
	for _, c := range []struct {
		hay, needle string
		start, want int64
	}{
		{"hello world", "o", 0, 4}, {"hello world", "o", 5, 7}, {"hello world", "x", 0, -1},
		{"hello", "", 3, 3}, {"hello", "", 5, 5}, {"hello", "hello!", 0, -1}, {"aab", "ab", 0, 1},
		{"hello", "lo", 3, 3}, {"hello", "lo", 4, -1},
	} {
		sig, e := itCall(t, p, "find", B(c.hay), B(c.needle), I64(c.start))
		if sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("bfind(%q, %q, %d) = %v %v, want %d", c.hay, c.needle, c.start, sig, e.Result(), c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		want int64
	}{{"", "", 1}, {"ab", "ab", 1}, {"ab", "ac", 0}, {"ab", "abc", 0}} {
		if sig, e := itCall(t, p, "eq", B(c.a), B(c.b)); sig != SigCompleted || e.Result().Int() != c.want {
			t.Errorf("beq(%q, %q) = %v %v", c.a, c.b, sig, e.Result())
		}
	}

	bounds := []struct {
		fn   string
		args []Value
	}{
		{"find", []Value{B("abc"), B("a"), I64(4)}},
		{"find", []Value{B("abc"), B("a"), I64(-1)}},
		{"get", []Value{B("abc"), I64(3)}},
		{"get", []Value{B("abc"), I64(-1)}},
		{"set", []Value{B("abc"), I64(3)}},
		{"slice", []Value{B("abc"), I64(2), I64(1)}},
		{"slice", []Value{B("abc"), I64(-1), I64(1)}},
		{"slice", []Value{B("abc"), I64(0), I64(4)}},
		{"copy", []Value{B("abc"), I64(1), B("xyz"), I64(0), I64(3)}},
		{"copy", []Value{B("abc"), I64(0), B("xyz"), I64(1), I64(3)}},
		{"copy", []Value{B("abc"), I64(0), B("xyz"), I64(0), I64(-1)}},
		{"copy", []Value{B("abc"), I64(-1), B("xyz"), I64(0), I64(1)}},
		{"copy", []Value{B("abc"), I64(maxI64), B("xyz"), I64(0), I64(2)}},
		{"new", []Value{I64(-1)}},
	}
	for _, c := range bounds {
		if sig, e := itCall(t, p, c.fn, c.args...); sig != SigTrapped || e.Trap().Code != TrapBounds {
			t.Errorf("%s%v = %v %v, want a bounds trap", c.fn, c.args, sig, e.Trap())
		}
	}
	if sig, e := itCall(t, p, "slice", B("abcdef"), I64(1), I64(4)); sig != SigCompleted || string(e.Result().BytesData()) != "bcd" {
		t.Errorf("bslice = %v %v", sig, e.Result())
	}
	if sig, e := itCall(t, p, "copy", B("abcdef"), I64(4), B("xyz"), I64(1), I64(2)); sig != SigCompleted || string(e.Result().BytesData()) != "abcdyz" {
		t.Errorf("bcopy = %v %v", sig, e.Result())
	}
	if sig, e := itCall(t, p, "copy", B("ab"), I64(2), B("xyz"), I64(3), I64(0)); sig != SigCompleted || string(e.Result().BytesData()) != "ab" {
		t.Errorf("empty bcopy at the ends = %v %v %v", sig, e.Result(), e.Trap())
	}
}

// TestStrings covers lds, slen, sconcat, seq, itos.
func TestStrings(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"ja", "de", "jade"}},
		itFn("f", "()->ref", 8, `
			lds r0, 0
			lds r1, 1
			sconcat r2, r0, r1
			lds r3, 2
			seq r4, r2, r3      # 1
			seq r5, r0, r3      # 0
			slen r6, r2         # 4
			add r4, r4, r5
			muli r4, r4, 100
			add r4, r4, r6      # 104
			itos r7, r4
			sconcat r7, r2, r7
			ret r7`),
		itFn("itos", "(i64)->ref", 2, "itos r1, r0; ret r1"),
		itFn("seq", "(ref,ref)->i64", 3, "seq r2, r0, r1; ret r2"),
	)
	if sig, e := itCall(t, p, "f"); sig != SigCompleted || e.Result().String() != "jade104" {
		t.Errorf("f = %v %v %v", sig, e.Result(), e.Trap())
	}
	for _, n := range []int64{0, -1, minI64, maxI64} {
		want := Str(map[int64]string{0: "0", -1: "-1", minI64: "-9223372036854775808", maxI64: "9223372036854775807"}[n])
		if sig, e := itCall(t, p, "itos", I64(n)); sig != SigCompleted || !e.Result().Equal(want) {
			t.Errorf("itos %d = %v %v", n, sig, e.Result())
		}
	}
	if sig, e := itCall(t, p, "seq", Str("a"), Str("ab")); sig != SigCompleted || e.Result().Int() != 0 {
		t.Errorf("seq = %v %v", sig, e.Result())
	}
	if sig, e := itCall(t, p, "seq", Str(""), Str("")); sig != SigCompleted || e.Result().Int() != 1 {
		t.Errorf("seq empty = %v %v", sig, e.Result())
	}
}

// TestLDSReusesHandle: a loop of lds does not grow the heap, and lds after
// free makes a fresh handle.
func TestLDSReusesHandle(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"constant"}}, itFn("f", "(i64)->ref", 3, `
		lds r1, 0
	loop:
		lds r2, 0
		subi r0, r0, 1
		jgti r0, 0, loop
		free r1
		lds r1, 0
		slen r0, r1
		ret r2`))
	e := itStart(t, p, "f", I64(10000))
	sig := e.Run(50)
	after := e.HeapBytes()
	if sig != SigPreempted || after != objHeader+8 {
		t.Fatalf("after 50 reductions: %v, heap %d", sig, after)
	}
	if sig := itRun(t, e, 1<<30); sig != SigTrapped || e.Trap().Code != TrapHandle || !strings.Contains(e.Trap().Msg, "stale") {
		// r2 holds the handle freed through r1: returning it is a use of a stale handle
		t.Fatalf("ret of the freed constant handle: %v %v", sig, e.Trap())
	}
	if e.HeapBytes() != objHeader+8 {
		t.Errorf("heap after free and lds: %d bytes", e.HeapBytes())
	}
}

// TestArrays covers anew, alen, ageti/f/r and aseti/f/r.
func TestArrays(t *testing.T) {
	p := itProg(t, &Program{KStr: []string{"x"}},
		itFn("f", "(i64)->ref", 12, `
			anew r1, r0, i64
			anew r2, r0, f64
			anew r3, r0, ref
			ldi r4, 1
			ldi r5, 77
			aseti r1, r4, r5
			itof r6, r5
			asetf r2, r4, r6
			lds r7, 0
			asetr r3, r4, r7
			ageti r8, r1, r4     # 77
			agetf r9, r2, r4
			ftoi r9, r9          # 77
			add r8, r8, r9
			alen r10, r3
			add r8, r8, r10      # + n
			ldi r4, 0
			agetr r11, r3, r4    # null
			asetr r3, r4, r11
			ldi r4, 2
			anew r11, r4, ref
			asetr r11, r4, r3    # wrong: index 2 of a 2-array
			ret r11`),
		itFn("g", "(i64)->ref", 12, `
			anew r1, r0, i64
			ldi r4, 1; ldi r5, 77
			aseti r1, r4, r5
			anew r3, r0, ref
			asetr r3, r4, r1     # [null, [0, 77, ...]]
			ret r3`),
		itFn("len", "(ref)->i64", 2, "alen r1, r0; ret r1"),
		itFn("geti", "(ref,i64)->i64", 3, "ageti r2, r0, r1; ret r2"),
		itFn("getf", "(ref,i64)->f64", 3, "agetf r2, r0, r1; ret r2"),
		itFn("getr", "(ref,i64)->ref", 3, "agetr r2, r0, r1; ret r2"),
		itFn("seti", "(ref,i64)->ref", 3, "aseti r0, r1, r1; ret r0"),
		itFn("setf", "(ref,i64,f64)->ref", 3, "asetf r0, r1, r2; ret r0"),
		itFn("new", "(i64)->ref", 2, "anew r1, r0, f64; ret r1"),
	)
	if sig, e := itCall(t, p, "f", I64(2)); sig != SigTrapped || e.Trap().Code != TrapBounds || e.Trap().PC != 21 {
		t.Errorf("f = %v %v", sig, e.Trap())
	}
	sig, e := itCall(t, p, "g", I64(3))
	if sig != SigCompleted || e.Result().String() != "[void, [0, 77, 0], void]" {
		t.Errorf("g = %v %v %v", sig, e.Result(), e.Trap())
	}
	ai, _ := Array(KindI64, I64(1), I64(2))
	af, _ := Array(KindF64, F64(1.5))
	ar, _ := Array(KindString, Str("s"), Void())
	check := func(fn string, args []Value, want Value) {
		t.Helper()
		if sig, e := itCall(t, p, fn, args...); sig != SigCompleted || !e.Result().Equal(want) {
			t.Errorf("%s%v = %v %v %v, want %v", fn, args, sig, e.Result(), e.Trap(), want)
		}
	}
	check("len", []Value{ai}, I64(2))
	check("len", []Value{af}, I64(1))
	check("len", []Value{ar}, I64(2))
	check("geti", []Value{ai, I64(1)}, I64(2))
	check("getf", []Value{af, I64(0)}, F64(1.5))
	check("getr", []Value{ar, I64(0)}, Str("s"))
	check("getr", []Value{ar, I64(1)}, Void())
	ai2, _ := Array(KindI64, I64(1), I64(1))
	check("seti", []Value{ai, I64(1)}, ai2)
	af2, _ := Array(KindF64, F64(-2))
	check("setf", []Value{af, I64(0), F64(-2)}, af2)
	af3, _ := Array(KindF64, F64(0), F64(0))
	check("new", []Value{I64(2)}, af3)
	for _, c := range []struct {
		fn   string
		args []Value
		code TrapCode
	}{
		{"geti", []Value{ai, I64(2)}, TrapBounds},
		{"geti", []Value{ai, I64(-1)}, TrapBounds},
		{"getf", []Value{af, I64(1)}, TrapBounds},
		{"getr", []Value{ar, I64(2)}, TrapBounds},
		{"seti", []Value{ai, I64(5)}, TrapBounds},
		{"setf", []Value{af, I64(1), F64(0)}, TrapBounds},
		{"geti", []Value{af, I64(0)}, TrapHandle},
		{"getf", []Value{ai, I64(0)}, TrapHandle},
		{"getr", []Value{ai, I64(0)}, TrapHandle},
		{"len", []Value{Str("x")}, TrapHandle},
		{"new", []Value{I64(-1)}, TrapBounds},
		{"new", []Value{I64(maxI64)}, TrapHeapLimit},
		{"new", []Value{I64(1 << 40)}, TrapHeapLimit},
	} {
		if sig, e := itCall(t, p, c.fn, c.args...); sig != SigTrapped || e.Trap().Code != c.code {
			t.Errorf("%s%v = %v %v, want %v", c.fn, c.args, sig, e.Trap(), c.code)
		}
	}
}

// TestArrayCycle: an array can't be stored into itself or into an array it
// contains; DAG sharing is fine.
func TestArrayCycle(t *testing.T) {
	p := itProg(t, nil,
		itFn("self", "()->ref", 3, "ldi r0, 1; anew r1, r0, ref; ldi r0, 0; asetr r1, r0, r1; ret r1"),
		itFn("loop", "()->ref", 4, `
			ldi r0, 1
			anew r1, r0, ref
			anew r2, r0, ref
			ldi r0, 0
			asetr r1, r0, r2    # a = [b]
			asetr r2, r0, r1    # b = [a]: cycle
			ret r1`),
		itFn("dag", "()->ref", 4, `
			ldi r0, 2
			anew r1, r0, ref
			anew r2, r0, ref
			ldi r0, 0
			asetr r1, r0, r2
			ldi r0, 1
			asetr r1, r0, r2    # a = [b, b]
			ret r1`))
	for _, fn := range []string{"self", "loop"} {
		if sig, e := itCall(t, p, fn); sig != SigTrapped || e.Trap().Code != TrapHandle || !strings.Contains(e.Trap().Msg, "acyclic") {
			t.Errorf("%s = %v %v", fn, sig, e.Trap())
		}
	}
	if sig, e := itCall(t, p, "dag"); sig != SigCompleted || e.Result().String() != "[[void, void], [void, void]]" {
		t.Errorf("dag = %v %v", sig, e.Result())
	}
}
