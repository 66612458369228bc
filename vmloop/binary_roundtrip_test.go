package vmloop

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vtDebugProgram is vtAllOpcodes with debug information everywhere.
func vtDebugProgram() *Program {
	p := vtAllOpcodes()
	p.KInt = append(p.KInt, -1, math.MinInt64)
	p.KFlt = append(p.KFlt, math.Inf(-1), math.Copysign(0, -1))
	p.KStr = append(p.KStr, "", "héllo\x00")
	p.KBytes = append(p.KBytes, []byte{}, []byte("\r\n\x00\xff"))
	f := &p.Funcs[0]
	f.RegNames = make([]string, f.NRegs)
	f.RegTypes = make([]Type, f.NRegs)
	for i := range f.RegNames {
		f.RegNames[i] = "r" + string(rune('a'+i%26))
		f.RegTypes[i] = Type(i % 4)
	}
	f.Lines = make([]int32, len(f.Code))
	for i := range f.Lines {
		f.Lines[i] = int32(i*3 - 5)
	}
	f.Labels = map[int]string{0: "entry", 7: "seven", len(f.Code) - 1: "last", -3: "odd"}
	p.Funcs[1].Lines = []int32{math.MaxInt32}
	for i := range p.Intrinsics {
		p.Intrinsics[i].Line, p.Intrinsics[i].Col = int32(7+i), int32(-3*i)
	}
	return p
}

func TestBinaryRoundTrip(t *testing.T) {
	for _, p := range []*Program{vtDebugProgram(), vtFib(), vtProg(vtFn("main", nil, TVoid, 0, Encode(RETV, 0, 0, 0, 0)))} {
		data, err := p.MarshalBinary()
		require.NoError(t, err)
		if !bytes.HasPrefix(data, []byte("JADE")) {
			t.Fatalf("no magic: % x", data[:8])
		}
		q, err := UnmarshalProgram(data)
		require.NoError(t, err)
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip differs\n got %+v\nwant %+v", q, p)
		}
		if q.Verified() {
			t.Fatal("a decoded program must start unverified")
		}
		vtMustVerify(t, q, nil)

		// Verify state is not encoded: a verified program encodes the same.
		vtMustVerify(t, p, nil)
		again, err := p.MarshalBinary()
		require.NoError(t, err)
		if !bytes.Equal(data, again) {
			t.Fatal("encoding changed after Verify")
		}
		var r Program
		if err := r.UnmarshalBinary(data); err != nil || len(r.Funcs) != len(p.Funcs) || r.Verified() {
			t.Fatalf("UnmarshalBinary: %v", err)
		}
	}
}

func TestBinaryCodeWordsLittleEndian(t *testing.T) {
	ins := Encode(ADDI, 1, 2, 0, -7)
	p := &Program{ABI: ABI, Funcs: []Function{vtFn("f", nil, TVoid, 3, ins)}}
	data, err := p.MarshalBinary()
	require.NoError(t, err)
	var want [8]byte
	binary.LittleEndian.PutUint64(want[:], uint64(ins))
	if !bytes.Contains(data, want[:]) {
		t.Fatalf("code word % x not found in % x", want, data)
	}
}

// vtBin builds a binary by hand, field by field.
type vtBin []byte

func (b vtBin) raw(s ...byte) vtBin { return append(b, s...) }
func (b vtBin) str(s string) vtBin  { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
func (b vtBin) uv(v uint64) vtBin   { return binary.AppendUvarint(b, v) }
func (b vtBin) u16(v uint16) vtBin  { return binary.LittleEndian.AppendUint16(b, v) }
func (b vtBin) word(i Instr) vtBin  { return binary.LittleEndian.AppendUint64(b, uint64(i)) }
func vtHeader() vtBin               { return vtBin("JADE").u16(1).u16(ABI.Major).u16(ABI.Minor) } // version 1: no file

func vtPools() vtBin                      { return vtHeader().uv(0).uv(0).uv(0).uv(0) }
func (b vtBin) fnHead(nregs uint64) vtBin { return b.str("main").uv(0).raw(byte(TVoid)).uv(nregs) }

func TestBinaryDecodeErrors(t *testing.T) {
	retv := Encode(RETV, 0, 0, 0, 0)
	valid := vtPools().uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(0)
	_, err := UnmarshalProgram(valid)
	require.NoError(t, err, "hand-built program")
	cases := []struct {
		name   string
		data   []byte
		offset int
		reason string
	}{
		{"empty", nil, 0, "truncated magic"},
		{"bad magic", []byte("JAVA\x01\x00"), 0, `bad magic "JAVA"`},
		{"newer version", vtBin("JADE").u16(BinaryVersion + 1), 4, "unsupported format version 6 (this VM reads versions 1 to 5)"},
		{"version 0", vtBin("JADE").u16(0), 4, "unsupported format version 0"},
		{"truncated file", vtBin("JADE").u16(2).u16(ABI.Major).u16(ABI.Minor).uv(5).raw('a'), 10, "file name length count 5 exceeds the remaining input"},
		{"truncated abi", vtBin("JADE").u16(BinaryVersion).raw(1), 6, "truncated abi major"},
		{"import line out of range", vtBin("JADE").u16(3).u16(ABI.Major).u16(ABI.Minor).str("").uv(0).uv(0).uv(0).uv(0).uv(1).str("a.b").uv(1 << 40), 20, "import line 549755813888 out of the int32 range"},
		{"version 3 import without col", vtBin("JADE").u16(3).u16(ABI.Major).u16(ABI.Minor).str("").uv(0).uv(0).uv(0).uv(0).uv(1).str("a.b").uv(0), 21, "truncated import col"},
		{"huge i64 pool", vtHeader().uv(1 << 60), 10, "i64 constant count 1152921504606846976 exceeds the remaining input"},
		{"i64 pool longer than input", vtHeader().uv(2).raw(1, 2, 3, 4, 5, 6, 7, 8), 10, "i64 constant count 2 exceeds the remaining input (8 bytes)"},
		{"huge string", vtHeader().uv(0).uv(0).uv(1).uv(1 << 62), 13, "string constant length count"},
		{"varint overflow", vtHeader().raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 10, "varint overflows 64 bits"},
		{"huge function count", vtPools().uv(math.MaxUint64), 14, "function count"},
		{"huge nregs", vtPools().uv(1).fnHead(1 << 40).uv(1).word(retv).uv(0).raw(0), 22, "register count 1099511627776 out of range"},
		{"huge code", vtPools().uv(1).fnHead(0).uv(1 << 30).word(retv), 23, "instruction count 1073741824 exceeds the remaining input"},
		{"handler start too big", vtPools().uv(1).fnHead(0).uv(1).word(retv).uv(1).uv(1<<33).uv(0).uv(0).raw(0, 0), 33, "handler start 8589934592 out of range"},
		{"unknown debug flags", vtPools().uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(0x30), 33, "unknown debug flags 0x30"},
		{"labels out of order", vtPools().uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(binDebugLabels).uv(2).raw(4).str("a").raw(2).str("b"), 38, "label pc 1 not above the previous one (2)"},
		{"line out of range", vtPools().uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(binDebugLines).uv(1).uv(1 << 40), 35, "line 549755813888 out of the int32 range"},
		{"truncated function", valid[:len(valid)-1], len(valid) - 1, "truncated debug flags"},
		{"trailing bytes", append(append([]byte{}, valid...), 0, 0), len(valid), "2 trailing bytes after the last function"},
	}
	format := regexp.MustCompile(`^vmloop: decode: offset \d+: `)
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			p, err := UnmarshalProgram(tc.data)
			require.Error(t, err, "decoded %+v", p)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("%T %v is not a *DecodeError", err, err)
			}
			if de.Offset != tc.offset || !strings.Contains(de.Reason, tc.reason) {
				t.Errorf("got %v\nwant offset %d, reason containing %q", err, tc.offset, tc.reason)
			}
			if !format.MatchString(err.Error()) {
				t.Errorf("bad error format %q", err)
			}
		})
	}
}

// TestBinaryDecodeEveryPrefixAndByte: every truncation of a valid encoding
// is rejected, and no single-byte change makes decoding or verification
// panic.
func TestBinaryDecodeEveryPrefixAndByte(t *testing.T) {
	data, err := vtDebugProgram().MarshalBinary()
	require.NoError(t, err)
	for n := range len(data) {
		if _, err := UnmarshalProgram(data[:n]); err == nil {
			t.Fatalf("prefix of %d/%d bytes decoded", n, len(data))
		}
	}
	mut := make([]byte, len(data))
	for i := range data {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			copy(mut, data)
			mut[i] ^= x
			if p, err := UnmarshalProgram(mut); err == nil {
				if err := vfVerify(p, nil); err != nil {
					var ve *VerifyError
					if !errors.As(err, &ve) {
						t.Fatalf("Verify error %T", err)
					}
				}
			}
		}
	}
}

// TestBinaryVersion2Imports: a version 2 file has no import positions; its
// imports decode with Line and Col 0.
func TestBinaryVersion2Imports(t *testing.T) {
	retv := Encode(RETV, 0, 0, 0, 0)
	data := vtBin("JADE").u16(2).u16(ABI.Major).u16(ABI.Minor).str("f.jasm").uv(0).uv(0).uv(0).uv(0).
		uv(1).str("io.print_i64").uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(0)
	p, err := UnmarshalProgram(data)
	require.NoError(t, err)
	require.Equal(t, []Import{{Name: "io.print_i64"}}, p.Intrinsics)
	require.Equal(t, "f.jasm", p.File)
}

// TestBinaryVersion3NoBytesPool: a version 3 file has no kbytes pool; it
// decodes with none, and the functions follow the imports directly.
func TestBinaryVersion3NoBytesPool(t *testing.T) {
	retv := Encode(RETV, 0, 0, 0, 0)
	data := vtBin("JADE").u16(3).u16(1).u16(2).str("old.jasm").uv(0).uv(0).uv(0).uv(1).str("s").
		uv(0).uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(0)
	p, err := UnmarshalProgram(data)
	require.NoError(t, err)
	require.Empty(t, p.KBytes)
	require.Equal(t, []string{"s"}, p.KStr)
	require.Len(t, p.Funcs, 1)
	require.NoError(t, Verify(p, nil))
}

// TestBinaryBytesPool: version 4 carries the kbytes pool after kstr.
func TestBinaryBytesPool(t *testing.T) {
	retv := Encode(RETV, 0, 0, 0, 0)
	data := vtBin("JADE").u16(4).u16(1).u16(3).str("").uv(0).uv(0).uv(0).uv(0).uv(2).str("ab").str("\x00").
		uv(0).uv(1).fnHead(0).uv(1).word(retv).uv(0).raw(0)
	p, err := UnmarshalProgram(data)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("ab"), {0}}, p.KBytes)
	_, err = UnmarshalProgram(data[:17])
	require.ErrorContains(t, err, "bytes constant")
}

func TestBinaryEncodeErrors(t *testing.T) {
	p := vtProg(vtFn("main", nil, TVoid, -1, Encode(RETV, 0, 0, 0, 0)))
	if _, err := p.MarshalBinary(); err == nil || !strings.HasPrefix(err.Error(), "vmloop: encode: ") {
		t.Fatalf("negative NRegs: %v", err)
	}
	p = vtProg(vtFn("main", nil, TVoid, 0, Encode(RETV, 0, 0, 0, 0)))
	p.Funcs[0].Labels = map[int]string{1 << 40: "far"}
	if _, err := p.MarshalBinary(); err == nil {
		t.Fatal("label pc beyond int32 encoded")
	}
}
