package jasm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestVerifyRejectsWrongKind: a string where bytes are needed (or the
// reverse) is rejected at load time with the source line when the
// register holds the wrong kind on every path: an opcode operand, an
// argument of a central intrinsic, through movr and across a merge.
func TestVerifyRejectsWrongKind(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"bcmp needle", `.func main() -> i64
  .local buf:ref, s:ref, n:i64, r:i64
  const n, 4
  bnew buf, n
  const s, "GET "
  bcmp r, buf, n, n, s
  ret r
.end`, `t.jasm:6: main@3: bcmp: r1 (s) is read as bytes but holds string on every path; convert it with stob first`},
		{"stoi of bytes", `.func main() -> i64
  .local b:ref, n:i64, e:i64
  ldb b, "12"
  const n, 0
  stoi n, e, b, n, n
  ret n
.end`, `t.jasm:5: main@2: stoi: r0 (b) is read as string but holds bytes on every path; convert it with btos first`},
		{"net.write of a string", `.abi 1.2
.func main(c:ref)
  .local s:ref, off:i64, n:i64
  const s, "HTTP/1.1 200 OK\r\n"
  const off, 0
  slen n, s
  intr n, net.write, c, s, off, n
  retv
.end`, `t.jasm:7: main@7: intr net.write, argument 1: r5 is read as bytes but holds string on every path`},
		{"through movr and a merge", `.func main(x:i64) -> i64
  .local a:ref, b:ref
  jz x, other
  const a, "one"
  jmp join
other:
  const a, "two"
join:
  mov b, a
  blen x, b
  ret x
.end`, `t.jasm:10: main@5: blen: r2 (b) is read as bytes but holds string on every path`},
		{"a new opcode under an old abi", `.abi 1.2
.func main() -> i64
  .local b:ref, n:i64
  ldb b, "x"
  blen n, b
  ret n
.end`, `t.jasm:4: main@0: ldb needs ABI 1.3 but the program declares .abi 1.2; raise the program's .abi to 1.3`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Assemble("t.jasm", []byte(c.src))
			require.NoError(t, err)
			err = vmloop.Verify(p, nil)
			require.ErrorContains(t, err, "vmloop: verify: "+c.want)
			var ve *vmloop.VerifyError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, "t.jasm", ve.File)
			require.Positive(t, ve.Line)
		})
	}
}

// TestVerifyKeepsUnknownKinds: where the kind is not the same on every
// path, or not known (a parameter, an array element, a call's result),
// the program loads and the check is left to run time.
func TestVerifyKeepsUnknownKinds(t *testing.T) {
	for name, src := range map[string]string{
		"string or bytes": `.func main(x:i64) -> i64
  .local a:ref
  jz x, other
  const a, "str"
  jmp join
other:
  ldb a, "bytes"
join:
  blen x, a
  ret x
.end`,
		"parameter": `.func main(a:ref) -> i64
  .local n:i64
  blen n, a
  ret n
.end`,
		"string or parameter": `.func main(a:ref, x:i64) -> i64
  jz x, join
  const a, "str"
join:
  blen x, a
  ret x
.end`,
		"call result": `.func main() -> i64
  .local a:ref, n:i64
  call a, mk
  blen n, a
  ret n
.end
.func mk() -> ref
  .local s:ref
  const s, "s"
  ret s
.end`,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Assemble("t.jasm", []byte(src))
			require.NoError(t, err)
			require.NoError(t, vmloop.Verify(p, nil))
		})
	}
}
