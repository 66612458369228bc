package vmloop

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestUnsoundPrograms runs programs that Verify would reject, marked
// verified by hand, as an unsound verifier would let through. The checked
// build (-tags jadecheck) must panic with a "vmloop: jadecheck:" message on
// each; the fast build must not crash the host: handles are checked in
// both builds, so a forged handle only traps.
func TestUnsoundPrograms(t *testing.T) {
	cases := []struct {
		name, body string
		nregs      int
		fast       TrapCode // the fast build's outcome: a trap code, or 0 for "completes"
		msg        string   // the jadecheck panic
	}{
		{"undefined register", "ret r1", 2, 0, "register r1 read as i64 holds an undefined value"},
		{"outside the frame", "ldi r3, 1; ret r0", 1, 0, "register r3 outside the frame (NRegs 1)"},
		{"forged handle", "ldi r0, 1; slen r0, r0; ret r0", 1, TrapHandle, "register r0 read as ref holds i64"},
		{"float as int", "ldf r0, 0; addi r0, r0, 1; ret r0", 1, 0, "register r0 read as i64 holds f64"},
		{"clobbered by a call", "ldi r0, 1; ldi r1, 2; call r0, 0, 1; ret r1", 2, 0, "register r1 read as i64 holds an undefined value"},
	}
	for _, c := range cases {
		code, _ := itAsm(c.body)
		p := &Program{ABI: ABI, KFlt: []float64{1.5}, Funcs: []Function{
			{Name: "f", Result: TI64, NRegs: c.nregs, Code: code},
			{Name: "g", Result: TI64, NRegs: 1, Code: []Instr{Encode(LDI, 0, 0, 0, 5), Encode(RET, 0, 0, 0, 0)}},
		}}
		p.verified = true // what an unsound verifier would do
		var sig Signal
		var e *Exec
		panicked := func() (msg string) {
			defer func() {
				if x := recover(); x != nil {
					msg = fmt.Sprint(x)
				}
			}()
			if !jadecheck && c.name == "outside the frame" {
				return ""
			}
			e, _ = NewExec(p, 0, nil, DefaultLimits, 3)
			sig = e.Run(1000)
			return ""
		}()
		if !jadecheck && c.name == "outside the frame" {
			// The fast build trusts the verifier for register bounds (it
			// addresses registers by pointer arithmetic): only the checked
			// build may run this one.
			continue
		}
		if jadecheck {
			if !strings.HasPrefix(panicked, "vmloop: jadecheck: ") || !strings.Contains(panicked, c.msg) {
				t.Errorf("%s: jadecheck panic %q, want %q", c.name, panicked, c.msg)
			}
			continue
		}
		switch {
		case panicked != "":
			t.Errorf("%s: the fast build panicked: %s", c.name, panicked)
		case c.fast == 0 && sig != SigCompleted, c.fast != 0 && (sig != SigTrapped || e.Trap().Code != c.fast):
			t.Errorf("%s: fast build %v %v, want %v", c.name, sig, e.Trap(), c.fast)
		}
	}
}

// TestStopConcurrent: Stop from another goroutine preempts a running loop.
func TestStopConcurrent(t *testing.T) {
	p := itProg(t, nil, itFn("spin", "()->i64", 2, "ldi r0, 0; loop: addi r0, r0, 1; call r1, 0, 1; jmp loop; ret r0"),
		itFn("leaf", "()->void", 1, "retv"))
	e := itStart(t, p, "spin")
	done := make(chan Signal)
	go func() { done <- e.Run(1 << 62) }()
	time.Sleep(20 * time.Millisecond)
	e.Stop()
	select {
	case sig := <-done:
		if sig != SigPreempted || e.Left() <= 0 {
			t.Errorf("stopped run: %v, left %d", sig, e.Left())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop did not preempt the loop")
	}
	e.ClearStop()
	if sig := e.Run(1000); sig != SigPreempted || e.Left() > 0 {
		t.Errorf("after ClearStop: %v, left %d", sig, e.Left())
	}
}
