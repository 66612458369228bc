package vmloop

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Random verified programs through the loop. A generator builds functions
// from typed register classes (i64, f64, string, bytes, array and error registers) with
// branches, loops, calls, throws and handlers; whatever Verify accepts is
// run in slices with small budgets. The loop must end every program with a
// signal, never a Go panic; under -tags jadecheck every register access is
// also type-checked against the verifier's claims, so a disagreement
// between the verifier and the loop shows up as a panic here.

const (
	fzI  = 0  // r0-r3 i64
	fzF  = 4  // r4-r5 f64
	fzS  = 6  // r6-r7 string
	fzB  = 8  // r8 bytes
	fzA  = 9  // r9 array<ref> (of strings)
	fzE  = 10 // r10 error
	fzW  = 11 // call window
	fzNR = 12
)

func fzProgram(rng *rand.Rand) *Program {
	nf := 1 + rng.IntN(3)
	p := &Program{
		ABI:        ABI,
		KInt:       []int64{minI64, -1, 7},
		KFlt:       []float64{0.5, -1e300},
		KStr:       []string{"", "ab", "boom"},
		KBytes:     [][]byte{[]byte("+42 "), []byte("Ab")},
		Intrinsics: []Import{{Name: "io.print_i64"}, {Name: "task.id"}},
	}
	for fi := 0; fi < nf; fi++ {
		p.Funcs = append(p.Funcs, fzFunc(rng, fi, nf))
	}
	return p
}

func fzFunc(rng *rand.Rand, fi, nf int) Function {
	ri := func() uint8 { return uint8(fzI + rng.IntN(4)) }
	rf := func() uint8 { return uint8(fzF + rng.IntN(2)) }
	rs := func() uint8 { return uint8(fzS + rng.IntN(2)) }
	n := 8 + rng.IntN(40)
	// prologue: every register gets a value of its class
	code := []Instr{
		Encode(LDI, 0, 0, 0, 1), Encode(LDI, 1, 0, 0, int32(rng.IntN(20))), Encode(LDI, 2, 0, 0, 3), Encode(LDI, 3, 0, 0, -2),
		Encode(ITOF, 4, 0, 0, 0), Encode(LDF, 5, 0, 0, 1),
		Encode(LDS, 6, 0, 0, 1), Encode(LDS, 7, 0, 0, 2), Encode(BNEW, fzB, 2, 0, 0),
		Encode(ANEW, fzA, 2, uint8(TRef), 0), Encode(NEWERR, fzE, 7, 0, 0),
	}
	pro := len(code)
	target := func() int32 { return int32(pro + rng.IntN(n+1)) }
	small := func() uint8 { // an i64 register masked to 0..3 (mostly in range)
		r := ri()
		code = append(code, Encode(ANDI, r, r, 0, 3))
		return r
	}
	plain := []Op{ADD, SUB, MUL, DIV, REM, AND, OR, XOR, SHL, SHR, SAR, EQ, NE, LT, LE, GT, GE}
	for len(code) < pro+n {
		switch k := rng.IntN(34); {
		case k < 8:
			code = append(code, Encode(plain[rng.IntN(len(plain))], ri(), ri(), ri(), 0))
		case k < 10:
			ops := []Op{ADDI, SUBI, MULI, ANDI, SHLI, SHRI, SARI}
			code = append(code, Encode(ops[rng.IntN(len(ops))], ri(), ri(), 0, int32(rng.IntN(130)-65)))
		case k < 12:
			ops := []Op{FADD, FSUB, FMUL, FDIV}
			code = append(code, Encode(ops[rng.IntN(len(ops))], rf(), rf(), rf(), 0))
		case k == 12:
			ops := []Op{FLT, FLE, FEQ}
			code = append(code, Encode(ops[rng.IntN(len(ops))], ri(), rf(), rf(), 0))
		case k == 13:
			code = append(code, Encode(FTOI, ri(), rf(), 0, 0), Encode(ITOF, rf(), ri(), 0, 0))
		case k < 17:
			ops := []Op{JLT, JEQ, JNE, JGE}
			code = append(code, Encode(ops[rng.IntN(len(ops))], ri(), ri(), 0, target()))
		case k == 17:
			code = append(code, EncodeBC(JLTI, ri(), int16(rng.IntN(40)), target()))
		case k == 18:
			// a call of a function of the program (they take no
			// arguments); the window is above every live register
			code = append(code, Encode(CALL, fzW, 0, 0, int32(rng.IntN(nf))))
		case k == 19:
			code = append(code, Encode(SLEN, ri(), rs(), 0, 0), Encode(BLEN, ri(), fzB, 0, 0))
		case k == 20:
			i, j := small(), small()
			code = append(code, Encode(BGET, ri(), fzB, i, 0), Encode(BSET, fzB, j, ri(), 0))
		case k == 21:
			code = append(code, Encode(SCONCAT, rs(), rs(), rs(), 0), Encode(SEQ, ri(), rs(), rs(), 0))
		case k == 22:
			code = append(code, Encode(ITOS, rs(), ri(), 0, 0), Encode(STOB, fzB, rs(), 0, 0), Encode(BTOS, rs(), fzB, 0, 0))
		case k == 23:
			i := small()
			code = append(code, Encode(ALEN, ri(), fzA, 0, 0), Encode(ASETR, fzA, i, rs(), 0))
			i = small()
			code = append(code, Encode(AGETR, rs(), fzA, i, 0))
		case k == 24:
			code = append(code, Encode(NEWERR, fzE, rs(), 0, 0), Encode(THROW, fzE, 0, 0, 0))
		case k == 25:
			d, s, l := small(), small(), small()
			code = append(code, Encode(BCOPY, fzB, d, fzB, EncodeD01(s, l)))
			s = small()
			code = append(code, Encode(BFIND, ri(), fzB, fzB, EncodeD01(s, 0)), Encode(BEQ, ri(), fzB, fzB, 0))
		case k == 26:
			if rng.IntN(4) == 0 {
				code = append(code, Encode(FREE, rs(), 0, 0, 0))
			}
		case k == 27:
			code = append(code, Encode(MOVR, rs(), rs(), 0, 0), Encode(MOVI, ri(), ri(), 0, 0), Encode(MOVF, rf(), rf(), 0, 0))
		case k == 28:
			code = append(code, Encode(INTR, 3, 1, 1, 0), Encode(INTR, 2, 0, 0, 1))
		case k == 29:
			code = append(code, Encode(ERRMSG, rs(), fzE, 0, 0), Encode(ERRKIND, rs(), fzE, 0, 0))
		case k == 30:
			lo, hi := small(), small()
			code = append(code, Encode(BSLICE, fzB, fzB, lo, EncodeD01(hi, 0)))
		case k == 31:
			// the bounded primitives of ABI 1.3 on ranges that are mostly
			// in bounds
			lo, hi := small(), small()
			switch rng.IntN(7) {
			case 0:
				code = append(code, Encode(BFINDR, ri(), fzB, fzB, EncodeD01(lo, hi)))
			case 1:
				code = append(code, Encode(BCMP, ri(), fzB, lo, EncodeD01(hi, fzB)))
			case 2:
				code = append(code, Encode(BCASECMP, ri(), fzB, lo, EncodeD01(hi, fzB)))
			case 3:
				code = append(code, Encode(BTOI, ri(), fzB, lo, EncodeD01(hi, ri())))
			case 4:
				code = append(code, Encode(STOI, ri(), rs(), lo, EncodeD01(hi, ri())))
			case 5:
				code = append(code, Encode(ITOB, ri(), fzB, lo, EncodeD01(ri(), 0)))
			default:
				code = append(code, Encode(LDB, fzB, 0, 0, int32(rng.IntN(2))))
			}
		default:
			code = append(code, Encode(JMP, 0, 0, 0, target()))
		}
	}
	code = append(code, Encode(RET, ri(), 0, 0, 0))
	f := Function{Name: "f" + string(rune('0'+fi)), Result: TI64, NRegs: fzNR, Code: code}
	if rng.IntN(2) == 0 {
		l := len(code)
		s := pro + rng.IntN(l-pro-1)
		e := s + 1 + rng.IntN(l-1-s)
		tgt := e + rng.IntN(l-e)
		if s > pro && rng.IntN(2) == 0 {
			tgt = pro + rng.IntN(s-pro)
		}
		f.Handlers = []Handler{{Start: uint32(s), End: uint32(e), Target: uint32(tgt), Reg: fzE}}
	}
	return f
}

// fzRun runs p's first function to its end in slices, answering requests.
func fzRun(t testing.TB, p *Program, rng *rand.Rand) Signal {
	e, err := NewExec(p, 0, nil, Limits{MaxFrames: 50, MaxHeapBytes: 1 << 16}, 1)
	require.NoError(t, err)
	for slice := 0; slice < 2000; slice++ {
		switch sig := e.Run(int64(1 + rng.IntN(200))); sig {
		case SigPreempted:
		case SigIntrinsic:
			switch rng.IntN(4) {
			case 0:
				e.Raise(Err(ErrKindHost, "no"))
			case 1:
				e.SetTrap(TrapHostPanic, "x")
			default:
				if e.Request().Intr.Result == TI64 {
					e.Complete(I64(5))
				} else {
					e.Complete(Void())
				}
			}
		default:
			return sig
		}
	}
	return SigPreempted
}

// TestRandomPrograms runs a few thousand random verified programs.
func TestRandomPrograms(t *testing.T) {
	n := 3000
	if testing.Short() || raceEnabled { // unit runs the full count
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	var sigs [5]int
	var present [NumOps]bool
	for i := 0; i < n; i++ {
		p := fzProgram(rng)
		if Verify(p, nil) != nil {
			continue
		}
		accepted++
		for _, f := range p.Funcs {
			for _, ins := range f.Code {
				if int(ins.Op()) < NumOps {
					present[ins.Op()] = true
				}
			}
		}
		sigs[fzRun(t, p, rng)]++
	}
	if accepted < n/10 {
		t.Errorf("only %d of %d random programs verified", accepted, n)
	}
	var missing []string
	for op := range NumOps {
		if !present[op] {
			missing = append(missing, Op(op).String())
		}
	}
	// Opcode coverage of the generator (the fuzz target uses the same one).
	t.Logf("%d programs verified; signals %v; opcode coverage %d/%d; not generated: %v",
		accepted, sigs, NumOps-len(missing), NumOps, missing)
}

// FuzzInterp runs random verified programs from a fuzzed seed.
func FuzzInterp(f *testing.F) {
	for i := uint64(0); i < 8; i++ {
		f.Add(i, i*7+1)
	}
	f.Fuzz(func(t *testing.T, a, b uint64) {
		rng := rand.New(rand.NewPCG(a, b))
		p := fzProgram(rng)
		if Verify(p, nil) != nil {
			return
		}
		fzRun(t, p, rng)
	})
}
