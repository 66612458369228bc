package vmloop

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// vtSeedPrograms are valid programs used as seeds and mutation bases.
func vtSeedPrograms() []*Program {
	nested := vtWithHandlers(vtFn("main", nil, TI64, 3,
		Encode(LDI, 0, 0, 0, 0),
		Encode(LDI, 1, 0, 0, 3),
		Encode(ADDI, 0, 0, 0, 1),
		Encode(CALL, 2, 0, 0, 1),
		Encode(JLT, 0, 1, 0, 2),
		Encode(CALL, 2, 0, 0, 1),
		Encode(RET, 0, 0, 0, 0),
		Encode(JLT, 0, 1, 0, 2),
		Encode(RET, 0, 0, 0, 0),
		Encode(ERRMSG, 2, 2, 0, 0),
		Encode(LDI, 0, 0, 0, -1),
		Encode(RET, 0, 0, 0, 0)),
		Handler{3, 4, 7, 2}, Handler{2, 7, 9, 2})
	return []*Program{vtFib(), vtAllOpcodes(), vtDebugProgram(), vtProg(nested, vtThrower()), vtChanProg("chan.send_i64"), vtChanProg("chan.send_f64")}
}

// vtCheckAccepted checks the invariants of a program Verify accepted.
func vtCheckAccepted(t *testing.T, p *Program) {
	t.Helper()
	require.True(t, p.Verified(), "accepted program not marked verified")
	for i, imp := range p.Intrinsics {
		if imp.Resolved == nil {
			t.Fatalf("import %d not resolved", i)
		}
	}
	for fi := range p.Funcs {
		vtCheckBlocks(t, &p.Funcs[fi])
	}
}

// FuzzVerify decodes arbitrary bytes and verifies whatever decodes: neither
// step may panic, errors must have their documented types, and accepted
// programs must satisfy the Blocks invariants and re-encode stably.
func FuzzVerify(f *testing.F) {
	for _, p := range vtSeedPrograms() {
		data, err := p.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("JADE"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := UnmarshalProgram(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(data) {
				t.Fatalf("decode error %T %v", err, err)
			}
			return
		}
		enc, err := p.MarshalBinary()
		require.NoError(t, err, "re-encode")
		q, err := UnmarshalProgram(enc)
		require.NoError(t, err, "decode of re-encoding")
		if err := vfVerify(p, nil); err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("verify error %T %v", err, err)
			}
			if p.Verified() {
				t.Fatal("rejected program marked verified")
			}
			return
		}
		vtCheckAccepted(t, p)
		require.NoError(t, vfVerify(q, nil), "re-encoded program rejected")
	})
}

// TestVerifyRandomPrograms runs the verifier on random and on mutated
// programs without the panic safety net.
func TestVerifyRandomPrograms(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := vtSeedPrograms()
	accepted := 0
	for i := range n {
		var p *Program
		if i%2 == 0 {
			p = vtRandomProgram(rng)
		} else {
			p = vtMutate(rng, seeds[rng.IntN(len(seeds))])
		}
		if err := vfVerify(p, nil); err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v", err, err)
			}
			continue
		}
		accepted++
		vtCheckAccepted(t, p)
	}
	t.Logf("%d of %d programs accepted", accepted, n)
}

func vtRandomProgram(rng *rand.Rand) *Program {
	nf := 1 + rng.IntN(3)
	p := &Program{ABI: ABI, KInt: []int64{1}, KFlt: []float64{1}, KStr: []string{"s"}}
	if rng.IntN(4) == 0 {
		p.Intrinsics = []Import{{Name: "io.print_i64"}, {Name: "task.cancelled"}}
	}
	for fi := range nf {
		nregs := rng.IntN(6)
		if rng.IntN(20) == 0 {
			nregs = rng.IntN(300)
		}
		f := Function{Name: string(rune('a' + fi)), NRegs: nregs, Result: Type(rng.IntN(4))}
		for range rng.IntN(min(nregs, 3) + 1) {
			f.Params = append(f.Params, Type(1+rng.IntN(3)))
		}
		ncode := 1 + rng.IntN(24)
		reg := func() uint8 { return uint8(rng.IntN(nregs + 1)) }
		for range ncode {
			op := Op(rng.IntN(NumOps + 2))
			d := int32(rng.IntN(ncode+1)) - int32(rng.IntN(2))
			switch op {
			case CALL, SPAWN, TAILCALL:
				d = int32(rng.IntN(nf))
			case INTR:
				d = int32(rng.IntN(2))
			case BCOPY, BSLICE, BFIND:
				d = EncodeD01(reg(), reg())
			}
			f.Code = append(f.Code, Encode(op, reg(), reg(), uint8(rng.IntN(4)), d))
		}
		if rng.IntN(2) == 0 {
			f.Code = append(f.Code, Encode(RETV+Op(rng.IntN(2))-1, 0, 0, 0, 0)) // RET r0 or RETV
		}
		for range rng.IntN(3) {
			s := uint32(rng.IntN(len(f.Code)))
			f.Handlers = append(f.Handlers, Handler{s, s + 1 + uint32(rng.IntN(3)), uint32(rng.IntN(len(f.Code) + 1)), reg()})
		}
		p.Funcs = append(p.Funcs, f)
	}
	return p
}

// vtMutate copies p and changes a few fields of its code or handlers.
func vtMutate(rng *rand.Rand, p *Program) *Program {
	q := *p
	q.verified = false
	q.Funcs = make([]Function, len(p.Funcs))
	for i, f := range p.Funcs {
		f.Code = append([]Instr(nil), f.Code...)
		f.Handlers = append([]Handler(nil), f.Handlers...)
		f.Blocks = nil
		q.Funcs[i] = f
	}
	q.Intrinsics = append([]Import(nil), p.Intrinsics...)
	for i := range q.Intrinsics {
		q.Intrinsics[i].Resolved = nil
	}
	for range 1 + rng.IntN(3) {
		f := &q.Funcs[rng.IntN(len(q.Funcs))]
		if len(f.Code) == 0 {
			continue
		}
		switch k := rng.IntN(10); {
		case k < 7:
			pc := rng.IntN(len(f.Code))
			shift := 8 * uint(rng.IntN(8))
			f.Code[pc] ^= Instr(rng.IntN(256)) << shift
		case k < 8 && len(f.Handlers) > 0:
			h := &f.Handlers[rng.IntN(len(f.Handlers))]
			h.Start, h.Target = h.Target, h.Start
		case k < 9:
			f.NRegs += rng.IntN(5) - 2
		default:
			pc := rng.IntN(len(f.Code))
			f.Code = append(f.Code[:pc:pc], f.Code[pc+1:]...)
		}
	}
	return &q
}
