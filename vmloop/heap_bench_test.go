package vmloop

import "testing"

// BenchmarkLoopRefs runs a loop of handle lookups: 8,192 one-element i64
// arrays in a ref array, read back r0 times (agetr then ageti: two
// lookups an element, half of them past the first chunk of the object
// table).
func BenchmarkLoopRefs(b *testing.B) {
	p := itProg(b, nil, itFn("refs", "(i64)->i64", 8, `ldi r1, 8192; anew r2, r1, ref; ldi r3, 0; ldi r4, 1;
fill: anew r5, r4, i64; asetr r2, r3, r5; addi r3, r3, 1; jlt r3, r1, fill;
ldi r6, 0; ldi r4, 0; ldi r7, 0;
outer: ldi r3, 0;
inner: agetr r5, r2, r3; ageti r0, r5, r4; add r6, r6, r0; addi r3, r3, 1; jlt r3, r1, inner;
addi r7, r7, 1; jlti r7, 64, outer; ret r6`))
	b.ReportAllocs()
	var instrs uint64
	for b.Loop() {
		e, err := NewExec(p, 0, []Value{I64(0)}, DefaultLimits, 1)
		if err != nil {
			b.Fatal(err)
		}
		if sig := e.Run(1 << 60); sig != SigCompleted {
			b.Fatalf("refs: %v %v", sig, e.Trap())
		}
		instrs = e.Reductions()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(instrs), "ns/instr")
}
