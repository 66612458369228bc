package vmloop

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Binary program format, version 5. All integers are little-endian; "uv" is
// an unsigned LEB128 varint (encoding/binary.Uvarint), "sv" a zig-zag signed
// varint (binary.Varint), "str" is uv length + bytes.
//
//	magic      "JADE"
//	version    u16                    BinaryVersion
//	abi        u16 major, u16 minor   the program's .abi
//	file       str                    Program.File (debug; version 2 only)
//	abiline    sv                     Program.ABILine (debug; version 2 only)
//	kint       uv n, n × u64          i64 constant pool
//	kflt       uv n, n × u64          f64 constant pool (IEEE-754 bits)
//	kstr       uv n, n × str          string constant pool
//	kbytes     uv n, n × str          bytes constant pool (version 4 only)
//	imports    uv n, n × import
//	funcs      uv n, n × function
//
//	import:
//	  name     str                    Import.Name
//	  line     sv                     Import.Line (debug; version 3 only)
//	  col      sv                     Import.Col (debug; version 3 only)
//
//	function:
//	  name     str
//	  params   uv n, n × u8 type
//	  result   u8 type
//	  nregs    uv
//	  code     uv n, n × u64          instruction words
//	  handlers uv n, n × (uv start, uv end, uv target, u8 reg)
//	  debug    u8 flags: 1 RegNames, 2 RegTypes, 4 Lines, 8 Labels,
//	           16 File (version 5 only);
//	           then, for each flag set, in that order:
//	  regnames uv n, n × str
//	  regtypes uv n, n × u8
//	  lines    uv n, n × sv
//	  labels   uv n, n × (sv pc, str)  pcs in increasing order
//	  file     str                    Function.File
//
// Version 4 is version 5 without the File debug flag (a linked program
// writes it for the functions of its imported modules). Version 3 is
// version 4 without the kbytes pool, version 2 is version 3 without the
// import line and col, version 1 is version 2 without the file
// and abiline fields; UnmarshalProgram reads all four (their missing fields
// decode as "", 0 and an empty pool), MarshalBinary writes version 5.
//
// The input must end exactly after the last function. The decoder checks
// only the format (every length is bounded by the bytes that remain, so a
// few bytes cannot make it allocate much); a decoded program is unverified
// until Verify accepts it. Verify state (Blocks, Resolved) is not encoded.

// BinaryVersion is the version of the binary format MarshalBinary writes.
// UnmarshalProgram reads it and every version from MinBinaryVersion up.
const BinaryVersion = 5

// MinBinaryVersion is the oldest binary format UnmarshalProgram reads.
const MinBinaryVersion = 1

const binMagic = "JADE"

const (
	binDebugRegNames = 1 << iota
	binDebugRegTypes
	binDebugLines
	binDebugLabels
	binDebugFile // version 5
	binDebugAll  = binDebugRegNames | binDebugRegTypes | binDebugLines | binDebugLabels | binDebugFile
)

// MarshalBinary encodes p in the binary program format.
func (p *Program) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 64+p.binSizeHint())
	b = append(b, binMagic...)
	b = binary.LittleEndian.AppendUint16(b, BinaryVersion)
	b = binary.LittleEndian.AppendUint16(b, p.ABI.Major)
	b = binary.LittleEndian.AppendUint16(b, p.ABI.Minor)
	b = binAppendStr(b, p.File)
	b = binary.AppendVarint(b, int64(p.ABILine))
	b = binary.AppendUvarint(b, uint64(len(p.KInt)))
	for _, k := range p.KInt {
		b = binary.LittleEndian.AppendUint64(b, uint64(k))
	}
	b = binary.AppendUvarint(b, uint64(len(p.KFlt)))
	for _, k := range p.KFlt {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k))
	}
	b = binary.AppendUvarint(b, uint64(len(p.KStr)))
	for _, s := range p.KStr {
		b = binAppendStr(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(p.KBytes)))
	for _, k := range p.KBytes {
		b = binAppendStr(b, bytesView(k))
	}
	b = binary.AppendUvarint(b, uint64(len(p.Intrinsics)))
	for _, imp := range p.Intrinsics {
		b = binAppendStr(b, imp.Name)
		b = binary.AppendVarint(b, int64(imp.Line))
		b = binary.AppendVarint(b, int64(imp.Col))
	}
	b = binary.AppendUvarint(b, uint64(len(p.Funcs)))
	for i := range p.Funcs {
		f := &p.Funcs[i]
		if f.NRegs < 0 {
			return nil, fmt.Errorf("vmloop: encode: function %q: NRegs %d is negative", f.Name, f.NRegs)
		}
		b = binAppendStr(b, f.Name)
		b = binary.AppendUvarint(b, uint64(len(f.Params)))
		for _, t := range f.Params {
			b = append(b, byte(t))
		}
		b = append(b, byte(f.Result))
		b = binary.AppendUvarint(b, uint64(f.NRegs))
		b = binary.AppendUvarint(b, uint64(len(f.Code)))
		for _, ins := range f.Code {
			b = binary.LittleEndian.AppendUint64(b, uint64(ins))
		}
		b = binary.AppendUvarint(b, uint64(len(f.Handlers)))
		for _, h := range f.Handlers {
			b = binary.AppendUvarint(b, uint64(h.Start))
			b = binary.AppendUvarint(b, uint64(h.End))
			b = binary.AppendUvarint(b, uint64(h.Target))
			b = append(b, h.Reg)
		}
		var flags byte
		if len(f.RegNames) > 0 {
			flags |= binDebugRegNames
		}
		if len(f.RegTypes) > 0 {
			flags |= binDebugRegTypes
		}
		if len(f.Lines) > 0 {
			flags |= binDebugLines
		}
		if len(f.Labels) > 0 {
			flags |= binDebugLabels
		}
		if f.File != "" {
			flags |= binDebugFile
		}
		b = append(b, flags)
		if flags&binDebugRegNames != 0 {
			b = binary.AppendUvarint(b, uint64(len(f.RegNames)))
			for _, s := range f.RegNames {
				b = binAppendStr(b, s)
			}
		}
		if flags&binDebugRegTypes != 0 {
			b = binary.AppendUvarint(b, uint64(len(f.RegTypes)))
			for _, t := range f.RegTypes {
				b = append(b, byte(t))
			}
		}
		if flags&binDebugLines != 0 {
			b = binary.AppendUvarint(b, uint64(len(f.Lines)))
			for _, l := range f.Lines {
				b = binary.AppendVarint(b, int64(l))
			}
		}
		if flags&binDebugLabels != 0 {
			pcs := make([]int, 0, len(f.Labels))
			for pc := range f.Labels {
				pcs = append(pcs, pc)
			}
			slices.Sort(pcs)
			if pcs[0] < math.MinInt32 || pcs[len(pcs)-1] > math.MaxInt32 {
				return nil, fmt.Errorf("vmloop: encode: function %q: label pc out of the int32 range", f.Name)
			}
			b = binary.AppendUvarint(b, uint64(len(pcs)))
			for _, pc := range pcs {
				b = binary.AppendVarint(b, int64(pc))
				b = binAppendStr(b, f.Labels[pc])
			}
		}
		if flags&binDebugFile != 0 {
			b = binAppendStr(b, f.File)
		}
	}
	return b, nil
}

func (p *Program) binSizeHint() int {
	n := 8 * (len(p.KInt) + len(p.KFlt))
	for i := range p.Funcs {
		n += 16 + 8*len(p.Funcs[i].Code)
	}
	return n
}

func binAppendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeError is a rejection by UnmarshalProgram: the byte offset where the
// problem was found and what is wrong.
type DecodeError struct {
	Offset int
	Reason string
}

func (e *DecodeError) Error() string {
	return "vmloop: decode: offset " + strconv.Itoa(e.Offset) + ": " + e.Reason
}

// UnmarshalProgram decodes a program in the binary format. It never panics
// and allocates at most a small multiple of len(data). The result is
// unverified: run Verify before executing it.
func UnmarshalProgram(data []byte) (*Program, error) {
	d := &binReader{data: data}
	p := d.program()
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

// UnmarshalBinary decodes data into p (encoding.BinaryUnmarshaler). p is
// unverified afterwards.
func (p *Program) UnmarshalBinary(data []byte) error {
	q, err := UnmarshalProgram(data)
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// binReader decodes with sticky errors: after the first failure every read
// returns zero values and the error keeps the first offset.
type binReader struct {
	data []byte
	off  int
	err  error
}

func (d *binReader) fail(at int, format string, args ...any) {
	if d.err == nil {
		d.err = &DecodeError{Offset: at, Reason: fmt.Sprintf(format, args...)}
	}
}

func (d *binReader) left() int { return len(d.data) - d.off }

func (d *binReader) bytes(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.left() {
		d.fail(d.off, "truncated %s: need %d bytes, %d left", what, n, d.left())
		return nil
	}
	b := d.data[d.off : d.off+n]
	d.off += n
	return b
}

func (d *binReader) u8(what string) byte {
	if b := d.bytes(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (d *binReader) u16(what string) uint16 {
	if b := d.bytes(2, what); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *binReader) u64(what string) uint64 {
	if b := d.bytes(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *binReader) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		if n == 0 {
			d.fail(d.off, "truncated %s", what)
		} else {
			d.fail(d.off, "%s: varint overflows 64 bits", what)
		}
		return 0
	}
	d.off += n
	return v
}

func (d *binReader) varint(what string) int64 {
	u := d.uvarint(what) // binary.Varint's zig-zag form over the same bytes
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// varint32 reads a varint that must fit in an int32.
func (d *binReader) varint32(what string) int32 {
	at := d.off
	v := d.varint(what)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(at, "%s %d out of the int32 range", what, v)
		return 0
	}
	return int32(v)
}

// uvarintMax reads a uvarint that must be at most max.
func (d *binReader) uvarintMax(what string, max uint64) uint64 {
	at := d.off
	v := d.uvarint(what)
	if d.err == nil && v > max {
		d.fail(at, "%s %d out of range (at most %d)", what, v, max)
		return 0
	}
	return v
}

// count reads an element count; each element takes at least minSize bytes,
// so the count is bounded by what remains of the input.
func (d *binReader) count(what string, minSize int) int {
	at := d.off
	v := d.uvarint(what + " count")
	if d.err != nil {
		return 0
	}
	if v > uint64(d.left()/minSize) {
		d.fail(at, "%s count %d exceeds the remaining input (%d bytes)", what, v, d.left())
		return 0
	}
	return int(v)
}

func (d *binReader) str(what string) string {
	n := d.count(what+" length", 1)
	return string(d.bytes(n, what))
}

func (d *binReader) program() *Program {
	if magic := d.bytes(len(binMagic), "magic"); d.err != nil {
		return nil
	} else if string(magic) != binMagic {
		d.fail(0, "bad magic %q: not a Jade binary program (want %q)", magic, binMagic)
		return nil
	}
	at := d.off
	version := d.u16("format version")
	if d.err == nil && (version < MinBinaryVersion || version > BinaryVersion) {
		d.fail(at, "unsupported format version %d (this VM reads versions %d to %d); rebuild the program with a matching assembler", version, MinBinaryVersion, BinaryVersion)
		return nil
	}
	p := &Program{}
	p.ABI.Major = d.u16("abi major")
	p.ABI.Minor = d.u16("abi minor")
	if version >= 2 {
		p.File = d.str("file name")
		p.ABILine = d.varint32("abi line")
	}
	if n := d.count("i64 constant", 8); n > 0 {
		p.KInt = make([]int64, n)
		for i := range p.KInt {
			p.KInt[i] = int64(d.u64("i64 constant"))
		}
	}
	if n := d.count("f64 constant", 8); n > 0 {
		p.KFlt = make([]float64, n)
		for i := range p.KFlt {
			p.KFlt[i] = math.Float64frombits(d.u64("f64 constant"))
		}
	}
	if n := d.count("string constant", 1); n > 0 {
		p.KStr = make([]string, n)
		for i := range p.KStr {
			p.KStr[i] = d.str("string constant")
		}
	}
	if version >= 4 {
		if n := d.count("bytes constant", 1); n > 0 {
			p.KBytes = make([][]byte, n)
			for i := range p.KBytes {
				p.KBytes[i] = []byte(d.str("bytes constant"))
			}
		}
	}
	importSize := 1 // name; version 3 adds line and col
	if version >= 3 {
		importSize = 3
	}
	if n := d.count("import", importSize); n > 0 {
		p.Intrinsics = make([]Import, n)
		for i := range p.Intrinsics {
			imp := &p.Intrinsics[i]
			imp.Name = d.str("import name")
			if version >= 3 {
				imp.Line = d.varint32("import line")
				imp.Col = d.varint32("import col")
			}
		}
	}
	// The smallest function is 7 bytes: name, params, result, nregs,
	// code, handlers, debug flags.
	if n := d.count("function", 7); n > 0 {
		p.Funcs = make([]Function, n)
		for i := range p.Funcs {
			d.function(&p.Funcs[i], version)
			if d.err != nil {
				return nil
			}
		}
	}
	if d.err == nil && d.left() != 0 {
		d.fail(d.off, "%d trailing bytes after the last function", d.left())
	}
	return p
}

func (d *binReader) function(f *Function, version uint16) {
	f.Name = d.str("function name")
	if n := d.count("parameter", 1); n > 0 {
		f.Params = make([]Type, n)
		for i := range f.Params {
			f.Params[i] = Type(d.u8("parameter type"))
		}
	}
	f.Result = Type(d.u8("result type"))
	f.NRegs = int(d.uvarintMax("register count", math.MaxInt32))
	if n := d.count("instruction", 8); n > 0 {
		f.Code = make([]Instr, n)
		for i := range f.Code {
			f.Code[i] = Instr(d.u64("instruction"))
		}
	}
	if n := d.count("handler", 4); n > 0 {
		f.Handlers = make([]Handler, n)
		for i := range f.Handlers {
			h := &f.Handlers[i]
			h.Start = uint32(d.uvarintMax("handler start", math.MaxUint32))
			h.End = uint32(d.uvarintMax("handler end", math.MaxUint32))
			h.Target = uint32(d.uvarintMax("handler target", math.MaxUint32))
			h.Reg = d.u8("handler register")
		}
	}
	at := d.off
	flags := d.u8("debug flags")
	known := byte(binDebugAll)
	if version < 5 {
		known &^= binDebugFile
	}
	if flags&^known != 0 {
		d.fail(at, "unknown debug flags %#x", flags&^known)
		return
	}
	if flags&binDebugRegNames != 0 {
		n := d.count("register name", 1)
		f.RegNames = make([]string, n)
		for i := range f.RegNames {
			f.RegNames[i] = d.str("register name")
		}
	}
	if flags&binDebugRegTypes != 0 {
		n := d.count("register type", 1)
		f.RegTypes = make([]Type, n)
		for i := range f.RegTypes {
			f.RegTypes[i] = Type(d.u8("register type"))
		}
	}
	if flags&binDebugLines != 0 {
		n := d.count("line", 1)
		f.Lines = make([]int32, n)
		for i := range f.Lines {
			f.Lines[i] = d.varint32("line")
		}
	}
	if flags&binDebugLabels != 0 {
		n := d.count("label", 2)
		f.Labels = make(map[int]string, n)
		prev := int64(math.MinInt64)
		for i := range n {
			at := d.off
			pc := d.varint("label pc")
			if d.err == nil && i > 0 && pc <= prev {
				d.fail(at, "label pc %d not above the previous one (%d); labels are stored in increasing pc order", pc, prev)
			}
			if d.err == nil && (pc < math.MinInt32 || pc > math.MaxInt32) {
				d.fail(at, "label pc %d out of range", pc)
			}
			prev = pc
			name := d.str("label name")
			if d.err != nil {
				return
			}
			f.Labels[int(pc)] = name
		}
	}
	if flags&binDebugFile != 0 {
		f.File = d.str("function file")
	}
}
