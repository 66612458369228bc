package vmloop

import (
	"fmt"
	"math/bits"
	"strings"
)

// Channel element types in the verifier. chan.new_i64, chan.new_f64 and
// chan.new_ref make a channel whose element type the intrinsic names; a
// typed operation (chan.send_X, chan.recv_X, chan.try_send_X, and
// sel.send_X of its second operand) on a
// register that holds a channel of another element type on every path
// that reaches it is rejected at load time with its source line. A
// channel that came from a parameter, a call, a spawn result, an array or
// a message is of unknown element type, and the run-time check (a trap,
// "wrong element type") stays for those. The pass runs only over the
// functions that name a typed channel operation, after the flow typing
// has accepted them, so it costs nothing to the programs that use none.

// Element sets of a register (bits).
const (
	vcI64   = 1 << iota // a chan.new_i64 result
	vcF64               // a chan.new_f64 result
	vcRef               // a chan.new_ref result
	vcOther             // any other value: unknown
)

// vcOfNew and vcOfOp give the element set a typed channel intrinsic
// makes or needs, by its row (chan_rows.go; 0: none).
func vcOfNew(id IntrinsicID) uint8 {
	if row := chanRowOf(id); row != nil && row.makes {
		return vcOfType(row.elem)
	}
	return 0
}

// vcOfOp also gives the argument that is the channel.
func vcOfOp(id IntrinsicID) (uint8, int) {
	if row := chanRowOf(id); row != nil && row.chanArg >= 0 {
		return vcOfType(row.elem), int(row.chanArg)
	}
	return 0, 0
}

func vcOfType(t Type) uint8 {
	switch t {
	case TI64:
		return vcI64
	case TF64:
		return vcF64
	}
	return vcRef
}

func vcName(m uint8) string {
	switch m {
	case vcI64:
		return "i64"
	case vcF64:
		return "f64"
	}
	return "ref"
}

// elemRules is what the element-type pass checks: the channel element
// types above, or the map types of verify_map.go. A register's set holds
// one bit per type a new-intrinsic makes (newOf) and other (unknown);
// an operation (opOf) accepts a set of types in its argument arg, and a
// register that holds one known type outside it on every path is
// refused with refuse's message.
type elemRules struct {
	newOf  func(id IntrinsicID) uint8
	opOf   func(id IntrinsicID) (accept uint8, arg int)
	other  uint8
	refuse func(in *Intrinsic, reg string, have, accept uint8) string
}

var chanRules = elemRules{
	newOf: vcOfNew,
	opOf:  vcOfOp,
	other: vcOther,
	refuse: func(in *Intrinsic, reg string, have, want uint8) string {
		return fmt.Sprintf("intr %s: %s holds a channel of %s elements (made by chan.new_%s) on every path, not of %s; use %s_%s, or a channel of %s",
			in.Name, reg, vcName(have), vcName(have), vcName(want), chanVerb(in), vcName(have), vcName(want))
	},
}

// usesTyped reports whether function fi names an operation of rules.
func (v *verifier) usesTyped(fi int, rules *elemRules) bool {
	for _, ins := range v.p.Funcs[fi].Code {
		if ins.Op() == INTR {
			if in := v.imports[ins.D()]; in.ID < HostIntrinsicBase {
				if acc, _ := rules.opOf(in.ID); acc != 0 {
					return true
				}
			}
		}
	}
	return false
}

// checkElems runs the element-type pass of rules over function fi (see
// above), over the same regions as the flow typing.
func (v *verifier) checkElems(fi int, lead vfBits, handlerAt []int32, rules *elemRules) error {
	vcOther := rules.other
	f := &v.p.Funcs[fi]
	n := len(f.Code)
	nregs := max(f.NRegs, 1)
	regionAt := make([]int32, n+1)
	var starts []int32
	for pc := lead.nextFrom(0); pc >= 0 && pc < n; pc = lead.nextFrom(pc + 1) {
		regionAt[pc] = int32(len(starts))
		starts = append(starts, int32(pc))
	}
	starts = append(starts, int32(n))
	nr := len(starts) - 1
	in := make([]uint8, nr*nregs)
	reached, dirty := make(vfBits, (nr+63)/64), make(vfBits, (nr+63)/64)
	for r := range nregs {
		in[r] = vcOther
	}
	reached.set(0)
	dirty.set(0)
	merge := func(pc int, s []uint8) {
		b := int(regionAt[pc])
		dst := in[b*nregs : (b+1)*nregs]
		if !reached.has(b) {
			copy(dst, s)
			reached.set(b)
			dirty.set(b)
			return
		}
		changed := false
		for r, m := range s {
			if dst[r]|m != dst[r] {
				dst[r] |= m
				changed = true
			}
		}
		if changed {
			dirty.set(b)
		}
	}
	st := make([]uint8, nregs)
	edge := make([]uint8, nregs)
	clobber := func(s []uint8, from int) {
		for r := from; r < len(s); r++ {
			s[r] = vcOther
		}
	}
	for {
		b := dirty.nextFrom(0)
		if b < 0 {
			return nil
		}
		dirty.clear(b)
		copy(st, in[b*nregs:(b+1)*nregs])
		start, end := int(starts[b]), int(starts[b+1])
		for pc := start; pc < end; pc++ {
			ins := f.Code[pc]
			op, a := ins.Op(), int(ins.A())
			if handlerAt != nil && opTable[op].Flags&FlagMayThrow != 0 && handlerAt[pc] >= 0 {
				h := f.Handlers[handlerAt[pc]]
				copy(edge, st)
				if op == CALL || op == TAILCALL {
					clobber(edge, a)
				}
				edge[h.Reg] = vcOther
				merge(int(h.Target), edge)
			}
			switch op {
			case CALL, TAILCALL:
				clobber(st, a)
			case SPAWN:
				if a < nregs && ins.B() != SpawnDetached {
					st[a] = vcOther
				}
			case INTR:
				in := v.imports[ins.D()]
				if in.ID < HostIntrinsicBase {
					want, arg := rules.opOf(in.ID)
					if r := a + arg; want != 0 && r < nregs && st[r] != vcOther && bits.OnesCount8(st[r]) == 1 && st[r]&want == 0 {
						return v.funcErr(fi, pc, "%s", rules.refuse(in, vfRegName(f, uint8(r)), st[r], want))
					}
				}
				if in.Result != TVoid && a < nregs {
					st[a] = vcOther
					if in.ID < HostIntrinsicBase {
						if m := rules.newOf(in.ID); m != 0 {
							st[a] = m
						}
					}
				}
			case MOVR:
				st[a] = st[ins.B()]
			default:
				sem := &vfSems[op]
				for i := range sem.nwrites {
					if r := int(vfReg(ins, sem.writes[i].field)); r < nregs {
						st[r] = vcOther
					}
				}
			}
		}
		ins := f.Code[end-1]
		info, _ := ins.Op().Info()
		if info.Flags&FlagBranch != 0 {
			merge(int(ins.D()), st)
		}
		if info.Flags&(FlagJump|FlagTerminator) == 0 {
			merge(end, st)
		}
	}
}

// chanVerb is the operation of a typed channel intrinsic (chan.send,
// chan.recv, chan.try_send, sel.send), for the fix an error suggests: its
// name without the element type.
func chanVerb(in *Intrinsic) string {
	return in.Name[:strings.LastIndexByte(in.Name, '_')]
}
