package vmloop

import "fmt"

// Object kinds in the verifier. A ref register is typed by flow like any
// other, and the verifier also follows what kind of object it names where
// the instruction that wrote it says (lds makes a string, stob bytes, ...;
// cfg.go, vkStr and vkBytes). An operand that needs a string or a byte
// buffer is rejected at load time, with its source line, when the register
// holds the other kind on every path that reaches it; a parameter, a call's
// result or an array element is of unknown kind, and the run-time check
// (TrapHandle, "wrong kind") stays for those.

// vfOpObjs are the object kinds of the string and bytes operands of each
// opcode, by field: what a ref source must hold, or what a ref destination
// is made of.
var vfOpObjs = map[Op]map[Field]uint8{
	LDS:     {FA: vkStr},
	NEWERR:  {FB: vkStr},
	ERRMSG:  {FA: vkStr},
	ERRKIND: {FA: vkStr},
	SLEN:    {FB: vkStr},
	SCONCAT: {FA: vkStr, FB: vkStr, FC: vkStr},
	SEQ:     {FB: vkStr, FC: vkStr},
	ITOS:    {FA: vkStr},
	STOB:    {FA: vkBytes, FB: vkStr},
	BTOS:    {FA: vkStr, FB: vkBytes},
	BNEW:    {FA: vkBytes},
	BLEN:    {FB: vkBytes},
	BGET:    {FB: vkBytes},
	BSET:    {FA: vkBytes},
	BCOPY:   {FA: vkBytes, FC: vkBytes},
	BSLICE:  {FA: vkBytes, FB: vkBytes},
	BFIND:   {FB: vkBytes, FC: vkBytes},
	BEQ:     {FB: vkBytes, FC: vkBytes},

	BFINDR:   {FB: vkBytes, FC: vkBytes},
	BCMP:     {FB: vkBytes, FD1: vkBytes},
	BCASECMP: {FB: vkBytes, FD1: vkBytes},
	BTOI:     {FB: vkBytes},
	STOI:     {FB: vkStr},
	ITOB:     {FB: vkBytes},
	LDB:      {FA: vkBytes},
}

// vfIntrObjs are the object kinds of the string and bytes parameters of
// central intrinsics, by name and parameter index (what the bus reads
// them as). A name the central table does not have is never looked up.
var vfIntrObjs = map[string]map[int]uint8{
	"io.print_str":    {0: vkStr},
	"net.listen":      {0: vkStr},
	"net.connect":     {0: vkStr},
	"net.read":        {1: vkBytes},
	"net.write":       {1: vkBytes},
	"file.open":       {0: vkStr},
	"file.read":       {1: vkBytes},
	"file.write":      {1: vkBytes},
	"net.read_n":      {1: vkBytes},
	"file.read_n":     {1: vkBytes},
	"net.listen_opts": {0: vkStr},
}

// vfObjKind returns the object kind of operand field fl of op, or 0.
func vfObjKind(op Op, fl Field) uint8 { return vfOpObjs[op][fl] }

// kindErr reports a read of register r, holding the kinds m, by an
// operand that needs an object of kind want.
func (fl *vfFlow) kindErr(pc int, r uint8, want int, m uint8) error {
	return fl.v.funcErr(fl.fi, pc, "%s: %s", fl.f.Code[pc].Op(), vfKindReason(vfRegName(fl.f, r), want, m))
}

// vfKindReason explains why register r, holding the ref kinds in m, cannot
// be read as an object of kind want.
func vfKindReason(r string, want int, m uint8) string {
	have := vkStr
	if m&(1<<vkStr) == 0 {
		have = vkBytes
	}
	fix := "convert it with stob"
	if want == vkStr {
		fix = "convert it with btos"
	}
	return fmt.Sprintf("%s is read as %s but holds %s on every path; %s first", r, vkNames[want], vkNames[have], fix)
}

// intrKinds checks the string and bytes parameters of the central
// intrinsic in called on the window from a (already type-checked).
func (fl *vfFlow) intrKinds(pc int, st vfState, a uint8, in *Intrinsic) error {
	if in.ID >= HostIntrinsicBase {
		return nil
	}
	for i, want := range vfIntrObjs[in.Name] {
		r := a + uint8(i)
		if m := st.mask(r); m&(1<<want|1<<vkRef) == 0 {
			return fl.v.funcErr(fl.fi, pc, "intr %s, argument %d: %s", in.Name, i, vfKindReason(vfRegName(fl.f, r), int(want), m))
		}
	}
	return nil
}
