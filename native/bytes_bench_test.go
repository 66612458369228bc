package native

import (
	"testing"

	"github.com/jadevm/jade/vmloop"
)

// srcHeaders parses the Content-Length of a request head k times with the
// bounded byte primitives of ABI 1.3 (bfindr, bcasecmp, btoi), which run
// in C on the buffers of the call's table.
const srcHeaders = `
.abi 1.3
.func main(k:i64) -> i64
  .local buf:ref, crlf:ref, name:ref, zero:i64, n:i64, at:i64, eol:i64, r:i64, v:i64, end:i64, sum:i64
  ldb      buf, "GET /index.html HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nUser-Agent: bench\r\ncontent-length: 42\r\n\r\n"
  ldb      crlf, "\r\n"
  ldb      name, "Content-Length: "
  const    zero, 0
  const    sum, 0
  blen     n, buf
loop:
  jlei     k, 0, done
  subi     k, k, 1
  bfindr   at, buf, crlf, zero, n
  addi     at, at, 2
line:
  bfindr   eol, buf, crlf, at, n
  jle      eol, at, loop               ; the blank line: no Content-Length
  bcasecmp r, buf, at, eol, name
  jz       r, found
  addi     at, eol, 2
  jmp      line
found:
  addi     at, at, 16
  btoi     v, end, buf, at, eol
  add      sum, sum, v
  jmp      loop
done:
  ret      sum
.end
`

// BenchmarkHeaders is a header parser's inner loop (srcHeaders, 10,000
// heads).
func BenchmarkHeaders(b *testing.B) {
	benchPair(b, srcHeaders, []vmloop.Value{vmloop.I64(10_000)}, 42*10_000)
}
