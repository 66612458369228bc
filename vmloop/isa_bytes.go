package vmloop

// The bounded byte and string primitives of ABI 1.3, for protocol parsers
// and writers (a reused read buffer holds valid data only up to what the
// last read returned, so every scan and compare takes an end bound as well
// as an offset). Their rows of the ISA table are here so that isa.go only
// names them; the interpreter half is interp_bytes.go.
//
// Bounds: a range [from, to) of a buffer or string of length n must have
// 0 <= from <= to <= n, and itob must fit its digits; anything else traps
// with TrapBounds, like bslice and bcopy. A parse that finds no number is
// not an error: btoi and stoi report it in their end offset.

// bytesOps are the rows of BFINDR..LDB, in opcode order.
var bytesOps = [...]OpInfo{
	{"bfindr", []Operand{dst(TI64, FA), src(TRef, FB), src(TRef, FC), src(TI64, FD0), src(TI64, FD1)}, tr | FlagBulk, "",
		"a = first index i with D0 <= i and i+len(c) <= D1 where b[i:i+len(c)] == c, or -1; traps unless 0 <= D0 <= D1 <= len(b)"},
	{"bcmp", []Operand{dst(TI64, FA), src(TRef, FB), src(TI64, FC), src(TI64, FD0), src(TRef, FD1)}, tr | FlagBulk, "",
		"a = -1, 0 or 1 as b[c:min(c+len(D1), D0)] is less than, equal to or greater than bytes D1; traps unless 0 <= c <= D0 <= len(b)"},
	{"bcasecmp", []Operand{dst(TI64, FA), src(TRef, FB), src(TI64, FC), src(TI64, FD0), src(TRef, FD1)}, tr | FlagBulk, "",
		"bcmp with ASCII letters folded to lower case on both sides"},
	{"btoi", []Operand{dst(TI64, FA), dst(TI64, FD1), src(TRef, FB), src(TI64, FC), src(TI64, FD0)}, tr | FlagBulk, "",
		"parse [+-]digits at the start of bytes b[c:D0]: a = the value, D1 = the offset past it; no digits: a = 0, D1 = c; out of i64 range: a = 0, D1 = -1 (so D1 <= c means no number); traps unless 0 <= c <= D0 <= len(b)"},
	{"stoi", []Operand{dst(TI64, FA), dst(TI64, FD1), src(TRef, FB), src(TI64, FC), src(TI64, FD0)}, tr | FlagBulk, "",
		"btoi on string b"},
	{"itob", []Operand{dst(TI64, FA), src(TRef, FB), src(TI64, FC), src(TI64, FD0)}, tr, "",
		"write decimal(D0) into bytes b at offset c; a = c + its length; traps unless it fits in b"},
	{"ldb", []Operand{dst(TRef, FA), {OConstB, TRef, FD}}, tr | FlagBulk, "",
		"a = new bytes(copy of kbytes[D])"},
}

// opSince is the ABI version that introduced an opcode, for the opcodes
// added after ABI 1.2: a program declaring an older .abi may not use them.
var opSince = map[Op]Version{
	BFINDR: v13, BCMP: v13, BCASECMP: v13, BTOI: v13, STOI: v13, ITOB: v13, LDB: v13,
}

// bytesCostDoc is the cost column of docs/ISA.md for these opcodes.
var bytesCostDoc = map[Op]string{
	BFINDR:   "1 + ⌈n/64⌉ (n offsets tried, the match included) for a needle of up to 16 bytes; longer: 1 + ⌈u/64⌉ (u units of the two-way search)",
	BCMP:     "1 + ⌈n/64⌉ (n = min(len(D1), D0-c), to the 64 KiB chunk of the first difference)",
	BCASECMP: "1 + ⌈n/64⌉ (as bcmp)",
	BTOI:     "1 + ⌈n/64⌉ (n bytes parsed)",
	STOI:     "1 + ⌈n/64⌉ (n bytes parsed)",
	LDB:      "1 + ⌈n/64⌉ (n bytes copied)",
}
