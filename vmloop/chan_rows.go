package vmloop

// The element types of the typed channel and select intrinsics: one row
// per chan.* or sel.* intrinsic that is specialized to an element type
// (the _i64, _f64 and _ref forms). The verifier's element-type pass
// (verify_chan.go) and the bus (the channel a send, receive or case must
// carry, the type of a case's value) read the row and switch on no ID,
// so a new typed channel intrinsic is its row in centralTable plus its
// row here; TestChanRows fails for one without a row.

// chanRow is a typed channel or select intrinsic's row.
type chanRow struct {
	// elem is the element type it works on.
	elem Type
	// makes: a chan.new_*: its result is a channel of elem.
	makes bool
	// chanArg is the argument that must be a channel of elem (0 for
	// chan.send_*, 1 for sel.send_*, after the select), or -1 for none
	// (sel.set_*, sel.value_*: elem is the type of a case's value).
	chanArg int8
}

var chanRows = map[IntrinsicID]chanRow{
	IntrChanNewI64: {TI64, true, -1}, IntrChanNewF64: {TF64, true, -1}, IntrChanNewRef: {TRef, true, -1},
	IntrChanSendI64: {TI64, false, 0}, IntrChanSendF64: {TF64, false, 0}, IntrChanSendRef: {TRef, false, 0},
	IntrChanRecvI64: {TI64, false, 0}, IntrChanRecvF64: {TF64, false, 0}, IntrChanRecvRef: {TRef, false, 0},
	IntrChanTrySendI64: {TI64, false, 0}, IntrChanTrySendF64: {TF64, false, 0}, IntrChanTrySendRef: {TRef, false, 0},
	IntrSelSendI64: {TI64, false, 1}, IntrSelSendF64: {TF64, false, 1}, IntrSelSendRef: {TRef, false, 1},
	IntrSelSetI64: {TI64, false, -1}, IntrSelSetF64: {TF64, false, -1}, IntrSelSetRef: {TRef, false, -1},
	IntrSelValueI64: {TI64, false, -1}, IntrSelValueF64: {TF64, false, -1}, IntrSelValueRef: {TRef, false, -1},
}

// chanRowByID indexes chanRows by ID (one load per channel operation).
var chanRowByID = indexRows(chanRows)

// chanRowOf returns id's channel row, or nil.
func chanRowOf(id IntrinsicID) *chanRow { return rowOf(chanRowByID, id) }

// Elem returns the element type a typed channel or select intrinsic
// works on (chan.send_f64: TF64; sel.value_ref: TRef), or TVoid for an
// intrinsic of no element type.
func (in *Intrinsic) Elem() Type {
	if in.ID < HostIntrinsicBase {
		if row := chanRowOf(in.ID); row != nil {
			return row.elem
		}
	}
	return TVoid
}
