package vmloop

import "fmt"

// Map types in the verifier: the element-type pass of verify_chan.go with
// the map's type for element type. map.new_K_V makes a map whose key kind
// (i64, or string or bytes: the operations do not tell these apart) and
// value type the intrinsic names; an operation that needs another key
// kind (map.iget_* against map.sget_*) or another value type
// (map.iput_i64 against map.iput_f64, map.val_ref against map.val_i64) on
// a register that holds such a map on every path is refused at load time
// with its source line. A map from a parameter, a call, a spawn or an
// array is of unknown type, and the run-time check (TrapKind) stays for
// those.

// Map types of a register (bits): key i64 or string/bytes × value.
const (
	vmII64 = 1 << iota // i64 keys, i64 values
	vmIF64
	vmIRef
	vmSI64 // string or bytes keys, i64 values
	vmSF64
	vmSRef
	vmOther
	vmI = vmII64 | vmIF64 | vmIRef
	vmS = vmSI64 | vmSF64 | vmSRef
)

var mapRules = elemRules{newOf: vmOfNew, opOf: vmOfOp, other: vmOther, refuse: vmRefuse}

func vmOfNew(id IntrinsicID) uint8 {
	row := mapRowOf(id)
	if row == nil || row.op != mapOpNew {
		return 0
	}
	return vmBit(row.key == KindI64, row.val)
}

// vmBit is the bit of a map of i64 keys (ikey) or not, and values val.
func vmBit(ikey bool, val Type) uint8 {
	b := uint8(vmSI64)
	if ikey {
		b = vmII64
	}
	switch val {
	case TF64:
		b <<= 1
	case TRef:
		b <<= 2
	}
	return b
}

func vmOfOp(id IntrinsicID) (uint8, int) {
	row := mapRowOf(id)
	if row == nil || row.op == mapOpNew {
		return 0, 0
	}
	key, val := row.key, row.val
	var acc uint8
	switch {
	case key == KindVoid && val == TVoid:
		return 0, 0
	case key == KindVoid:
		acc = vmBit(true, val) | vmBit(false, val)
	case val == TVoid:
		acc = vmS
		if key == KindI64 {
			acc = vmI
		}
	default:
		acc = vmBit(key == KindI64, val)
	}
	return acc, 0
}

// vmName names the map type of one bit.
func vmName(b uint8) (keys, vals string) {
	keys = "string or bytes"
	if b&vmI != 0 {
		keys = "i64"
	}
	switch {
	case b&(vmII64|vmSI64) != 0:
		vals = "i64"
	case b&(vmIF64|vmSF64) != 0:
		vals = "f64"
	default:
		vals = "ref"
	}
	return keys, vals
}

func vmRefuse(in *Intrinsic, reg string, have, accept uint8) string {
	hk, hv := vmName(have)
	row := mapRowOf(in.ID)
	key, val := row.key, row.val
	need := ""
	switch {
	case key != KindVoid && (key == KindI64) != (have&vmI != 0):
		need = "i64 keys"
		if key != KindI64 {
			need = "string or bytes keys"
		}
	default:
		need = val.String() + " values"
	}
	return fmt.Sprintf("intr %s: %s holds a map of %s keys and %s values on every path (made by map.new_*), not one of %s", in.Name, reg, hk, hv, need)
}
