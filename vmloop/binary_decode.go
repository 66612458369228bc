package vmloop

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// DecodeError is a rejection by UnmarshalProgram: the byte offset where the
// problem was found and what is wrong.
type DecodeError struct {
	Offset int
	Reason string
}

func (e *DecodeError) Error() string {
	return "vmloop: decode: offset " + strconv.Itoa(e.Offset) + ": " + e.Reason
}

// BinaryMemoryFactor bounds what a decoded program may take in memory:
// UnmarshalProgram refuses a file whose decoded form would exceed
// BinaryMemoryFactor times its size plus BinaryMemorySlack bytes, before
// allocating it. Every element of the format takes at least one byte in
// the file and at most sizeof(Function) = 240 bytes in memory, so without
// the bound a file of small elements (empty functions, strings, imports)
// would decode to up to 60 times its size. What the assembler writes stays
// below the bound: code, constants and debug lines decode to their own
// size; the worst real program, one-instruction functions with one-byte
// names, takes about 15.6 times its size.
const BinaryMemoryFactor = 16

// BinaryMemorySlack is the part of the decode bound that does not grow
// with the file (BinaryMemoryFactor): small files are never refused.
const BinaryMemorySlack = 1 << 20

// binMapEntry is what one entry of Function.Labels is charged: a key, a
// string header and the map's control and spare slots.
const binMapEntry = 48

// UnmarshalProgram decodes a program in the binary format. It never panics
// and allocates at most BinaryMemoryFactor times len(data) plus
// BinaryMemorySlack bytes for the program it returns: it checks each
// declared count against the bytes that remain and against that bound
// before allocating. The result is unverified: run Verify before executing
// it.
func UnmarshalProgram(data []byte) (*Program, error) {
	d := &binReader{data: data, memLeft: BinaryMemoryFactor*int64(len(data)) + BinaryMemorySlack}
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
	// memLeft is what the decoded program may still allocate (the bound
	// of UnmarshalProgram); charge takes from it before each allocation.
	memLeft int64
}

// charge takes n elements of size bytes each from the memory bound, or
// fails at offset at when they do not fit. n is at most len(data) (count
// checked it against the input), so n*size cannot overflow an int64.
func (d *binReader) charge(at, n, size int, what, noun string) bool {
	if d.err != nil {
		return false
	}
	if cost := int64(n) * int64(size); cost > d.memLeft {
		d.fail(at, "%s%s count %d needs %d bytes of memory, more than the %d left of the decode bound (%d times the %d-byte file plus %d); the file is corrupt or hostile: programs the assembler writes stay below it",
			what, noun, n, cost, d.memLeft, BinaryMemoryFactor, len(d.data), BinaryMemorySlack)
		return false
	}
	d.memLeft -= int64(n) * int64(size)
	return true
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

// count reads an element count; each element takes at least minSize bytes
// in the file and size bytes in memory, so the count is bounded by what
// remains of the input and charged to the memory bound.
func (d *binReader) count(what string, minSize, size int) int {
	return d.countOf(what, "", minSize, size)
}

// countOf is count for the element what+noun (" length" for a string), the
// name built only for an error.
func (d *binReader) countOf(what, noun string, minSize, size int) int {
	at := d.off
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.off:])
	if n <= 0 {
		d.uvarint(what + noun + " count") // the error
		return 0
	}
	d.off += n
	if v > uint64(d.left()/minSize) {
		d.fail(at, "%s%s count %d exceeds the remaining input (%d bytes)", what, noun, v, d.left())
		return 0
	}
	if !d.charge(at, int(v), size, what, noun) {
		return 0
	}
	return int(v)
}

func (d *binReader) str(what string) string {
	n := d.countOf(what, " length", 1, 1)
	return string(d.bytes(n, what))
}

// byteStr reads a str field as a []byte of its own (not via a string: one
// copy).
func (d *binReader) byteStr(what string) []byte {
	n := d.countOf(what, " length", 1, 1)
	b := d.bytes(n, what)
	if d.err != nil {
		return nil
	}
	return append(make([]byte, 0, n), b...)
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
	if n := d.count("i64 constant", 8, 8); n > 0 {
		p.KInt = make([]int64, n)
		for i := range p.KInt {
			p.KInt[i] = int64(d.u64("i64 constant"))
		}
	}
	if n := d.count("f64 constant", 8, 8); n > 0 {
		p.KFlt = make([]float64, n)
		for i := range p.KFlt {
			p.KFlt[i] = math.Float64frombits(d.u64("f64 constant"))
		}
	}
	if n := d.count("string constant", 1, int(unsafe.Sizeof(""))); n > 0 {
		p.KStr = make([]string, n)
		for i := range p.KStr {
			p.KStr[i] = d.str("string constant")
		}
	}
	if version >= 4 {
		if n := d.count("bytes constant", 1, int(unsafe.Sizeof([]byte(nil)))); n > 0 {
			p.KBytes = make([][]byte, n)
			for i := range p.KBytes {
				p.KBytes[i] = d.byteStr("bytes constant")
			}
		}
	}
	importSize := 1 // name; version 3 adds line and col
	if version >= 3 {
		importSize = 3
	}
	if n := d.count("import", importSize, int(unsafe.Sizeof(Import{}))); n > 0 {
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
	if n := d.count("function", 7, int(unsafe.Sizeof(Function{}))); n > 0 {
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
	if n := d.count("parameter", 1, 1); n > 0 {
		f.Params = make([]Type, n)
		for i := range f.Params {
			f.Params[i] = Type(d.u8("parameter type"))
		}
	}
	f.Result = Type(d.u8("result type"))
	f.NRegs = int(d.uvarintMax("register count", math.MaxInt32))
	if n := d.count("instruction", 8, 8); n > 0 {
		f.Code = make([]Instr, n)
		for i := range f.Code {
			f.Code[i] = Instr(d.u64("instruction"))
		}
	}
	if n := d.count("handler", 4, int(unsafe.Sizeof(Handler{}))); n > 0 {
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
		n := d.count("register name", 1, int(unsafe.Sizeof("")))
		f.RegNames = make([]string, n)
		for i := range f.RegNames {
			f.RegNames[i] = d.str("register name")
		}
	}
	if flags&binDebugRegTypes != 0 {
		n := d.count("register type", 1, 1)
		f.RegTypes = make([]Type, n)
		for i := range f.RegTypes {
			f.RegTypes[i] = Type(d.u8("register type"))
		}
	}
	if flags&binDebugLines != 0 {
		n := d.count("line", 1, 4)
		f.Lines = make([]int32, n)
		for i := range f.Lines {
			f.Lines[i] = d.varint32("line")
		}
	}
	if flags&binDebugLabels != 0 {
		n := d.count("label", 2, binMapEntry)
		if n > 0 { // no map for an empty table: a file of empty tables must not cost a map per function
			f.Labels = make(map[int]string, n)
		}
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
