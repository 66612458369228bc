package vmloop

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
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
