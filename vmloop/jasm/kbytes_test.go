package jasm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestKBytesPool: .kbytes entries and ldb literals fill the bytes pool
// (literals deduplicated), #N names an entry, the disassembly spells out a
// pool that literals alone would not rebuild, and both round-trip.
func TestKBytesPool(t *testing.T) {
	src := `.kbytes "\r\n", "HTTP/1.1 200 OK\r\n"
.func main() -> i64
  .local a:ref, b:ref, c:ref, n:i64
  ldb a, #1
  ldb b, "\r\n"
  ldb c, "\x00\xff"
  blen n, c
  ret n
.end
`
	p, err := Assemble("k.jasm", []byte(src))
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("\r\n"), []byte("HTTP/1.1 200 OK\r\n"), {0, 0xff}}, p.KBytes)
	code := p.Funcs[0].Code
	require.Equal(t, []int32{1, 0, 2}, []int32{code[0].D(), code[1].D(), code[2].D()})
	text := Disassemble(p)
	require.Contains(t, text, `.kbytes "HTTP/1.1 200 OK\r\n" ; #1`)
	roundTrip(t, "kbytes", p)
	require.NoError(t, vmloop.Verify(p, nil))
	e, err := vmloop.NewExec(p, 0, nil, vmloop.DefaultLimits, 1)
	require.NoError(t, err)
	require.Equal(t, vmloop.SigCompleted, e.Run(100))
	require.Equal(t, int64(2), e.Result().Int())

	// a pool in literal order disassembles without the directive
	q, err := Assemble("k.jasm", []byte(".func main()\n  .local a:ref\n  ldb a, \"x\"\n  retv\n.end\n"))
	require.NoError(t, err)
	require.NotContains(t, Disassemble(q), ".kbytes")
	require.Contains(t, Disassemble(q), `ldb       a, "x"`)
}

func TestKBytesErrors(t *testing.T) {
	for src, want := range map[string]string{
		".kbytes 5\n": `k.jasm:1:9: .kbytes takes string literals (their bytes), got`,
		".func main()\n  .local a:ref\n  ldb a, 5\n  retv\n.end\n":     `k.jasm:3:10: expected a string literal (its bytes), got`,
		".func main()\n  .local a:ref\n  ldb a, #0\n  retv\n.end\n":    `k.jasm:3:10: index #0 is out of range: the bytes pool has 0 entries`,
		".func main()\n  .local a:i64\n  ldb a, \"x\"\n  retv\n.end\n": `k.jasm:3:7: `,
	} {
		_, err := Assemble("k.jasm", []byte(src))
		require.Error(t, err, src)
		require.True(t, strings.Contains(err.Error(), want), "%q: %v, want %q", src, err, want)
	}
}
