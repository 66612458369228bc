package jasm_test

import (
	"fmt"

	"github.com/jadevm/jade/vmloop"
	"github.com/jadevm/jade/vmloop/jasm"
)

// The bounded byte primitives of ABI 1.3 parse a header from a reused
// buffer: every scan stops at the end of the valid data (n), the header
// name is compared without regard to case and at an offset (no copy), and
// btoi reports a missing or out-of-range number in its end offset.
func Example_contentLength() {
	p, err := jasm.Assemble("cl.jasm", []byte(`
.abi 1.3
.func main(buf:ref, n:i64) -> i64
  .local name:ref, crlf:ref, zero:i64, at:i64, eol:i64, r:i64, v:i64, end:i64
  ldb      name, "content-length: "
  ldb      crlf, "\r\n"
  const    zero, 0
  bfindr   at, buf, crlf, zero, n
  addi     at, at, 2                 ; the header line after the request line
  bfindr   eol, buf, crlf, at, n
  bcasecmp r, buf, at, eol, name
  jnz      r, bad
  addi     at, at, 16
  btoi     v, end, buf, at, eol
  jle      end, at, bad              ; no digits, or out of range
  ret      v
bad:
  const    v, -1
  ret      v
.end`))
	if err != nil {
		panic(err)
	}
	if err := vmloop.Verify(p, nil); err != nil {
		panic(err)
	}
	buf := make([]byte, 64)
	for _, req := range []string{
		"GET /a/long/path HTTP/1.1\r\nContent-Length: 7\r\n",
		"GET / HTTP/1.1\r\nCONTENT-LENGTH: 42\r\n",
		"GET / HTTP/1.1\r\nContent-Length: x\r\n",
	} {
		n := copy(buf, req) // a shorter request leaves stale bytes behind it
		e, err := vmloop.NewExec(p, 0, []vmloop.Value{vmloop.Bytes(buf), vmloop.I64(int64(n))}, vmloop.DefaultLimits, 1)
		if err != nil {
			panic(err)
		}
		e.Run(10_000)
		fmt.Println(e.Result().Int())
	}
	// Output:
	// 7
	// 42
	// -1
}
