package vmloop

import (
	"bytes"
	"fmt"
)

// The http family (ABI 1.7): http.parse_head finds and parses an HTTP/1.1
// request head (RFC 9112) in a bytes object in one step, run by the VM
// loop itself (Family.InVM), so that std/http's per-request parse is one
// instruction and not some two hundred. Its rules are std/http's (the
// module's comment lists what is refused and with which status), and
// TestParseHeadAgrees (std) holds it to the bytecode parser it replaced,
// malformed heads included.
//
//	intr r, http.parse_head, buf, start, scan, end, fields, out
//
// looks at buf[start:end]: it skips the empty lines (CR LF) before the
// request line (RFC 9112 2.2), looks for the CR LF CR LF that ends the
// head from scan on (a caller that read more resumes where it stopped:
// scan is clamped to the head's first byte), and parses the head when it
// is all there. The result r is
//
//   - >= 0: the offset past the head; out holds the request (the httpOut*
//     indices below);
//   - -1: the head has not all come: out[httpOutStart] is the head's first
//     byte (past the empty lines) and out[httpOutScan] the scan of the
//     next call, once more bytes are in;
//   - -400, -431 or -501: the head is refused with that status (400 a
//     malformed head, a bare CR or LF, a NUL, two Content-Lengths that
//     differ, a missing or second Host; 431 more than fields header fields,
//     or no end of head in httpHeadMax bytes; 501 an unknown method or a
//     Transfer-Encoding). out is not written.
//
// out is an i64 array of httpOutLen elements at least. The step is
// bounded: it looks at httpHeadMax bytes at most and costs httpHeadCost
// plus one reduction per 64 bytes it looks at (S-6).

// Indices of http.parse_head's out array.
const (
	httpOutStart     = iota // the request line's first byte
	httpOutScan             // -1 result: where the next call resumes its search
	httpOutMethod           // 1 GET, 2 HEAD, 3 POST, 4 PUT, 5 DELETE, 6 PATCH, 7 OPTIONS, 8 CONNECT, 9 TRACE
	httpOutTarget           // the request target is buf[out[3]:out[4]]
	httpOutTargetEnd        // the offset past the request target
	httpOutKeep             // 1: the connection stays open after the reply (HTTP/1.1 unless "close"; HTTP/1.0 with "keep-alive")
	httpOutV11              // 1 HTTP/1.1, 0 HTTP/1.0
	httpOutLength           // Content-Length, -1 when none
	httpOutFields           // the number of header fields
	httpOutLen              // the least length of out
)

const (
	// httpHeadMax bounds what one http.parse_head looks at: a head whose
	// end (with the empty lines before it) is not within httpHeadMax
	// bytes of start is refused with 431.
	httpHeadMax = 64 << 10
	// httpHeadCost is the charge of http.parse_head beside its bytes.
	httpHeadCost = 2
)

// httpMethods are RFC 9110's methods, matched exactly (case-sensitive),
// in the order of their codes (1 to 9).
var httpMethods = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}

// httpRow is one http intrinsic's row: what the VM loop runs for it.
type httpRow struct {
	run func(e *Exec, ins Instr, r regs, left int64) (int64, opStatus)
}

// httpRows are the rows of the http family; TestHTTPRows fails for an
// http.* intrinsic without one.
var httpRows = map[IntrinsicID]httpRow{
	IntrHTTPParseHead: {run: (*Exec).httpParseHead},
}

var httpRowByID = indexRows(httpRows)

// httpOp runs the http intrinsic id of the INTR instruction ins by its
// row; an ID without a row traps.
func (e *Exec) httpOp(id IntrinsicID, ins Instr, r regs, left int64) (int64, opStatus) {
	row := rowOf(httpRowByID, id)
	if row == nil {
		e.x().trap = TrapInfo{Code: TrapIntrinsic, Msg: "no in-VM implementation of " + intrByID[id].Name}
		return left, opTrap
	}
	return row.run(e, ins, r, left)
}

// httpParseHead runs http.parse_head (window a..a+5, result in a).
func (e *Exec) httpParseHead(ins Instr, r regs, left int64) (int64, opStatus) {
	h := &e.heap
	a := ins.A()
	bo := h.get(r.ref(a), KindBytes)
	if bo == nil {
		e.badHandle(r.ref(a), KindBytes)
		return left, opTrap
	}
	oo := h.get(r.ref(a+5), KindArrayI64)
	if oo == nil {
		e.badHandle(r.ref(a+5), KindArrayI64)
		return left, opTrap
	}
	buf, out := bo.bytes(), oo.arr()
	start, scan, end, fields := r.i(a+1), r.i(a+2), r.i(a+3), r.i(a+4)
	if start < 0 || start > end || end > int64(len(buf)) || scan < 0 || scan > end {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("http.parse_head: start %d, scan %d, end %d in length %d (need 0 <= start <= end <= length, 0 <= scan <= end)", start, scan, end, len(buf))}
		return left, opTrap
	}
	if len(out) < httpOutLen {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("http.parse_head: out has %d elements (at least %d)", len(out), httpOutLen)}
		return left, opTrap
	}
	var res [httpOutLen]int64
	code, looked := parseHead(buf, start, scan, end, fields, &res)
	switch {
	case code >= 0:
		for i := range res {
			out[i] = uint64(res[i])
		}
	case code == -1:
		out[httpOutStart], out[httpOutScan] = uint64(res[httpOutStart]), uint64(res[httpOutScan])
	}
	r.setI(a, code)
	return left - httpHeadCost - charge(looked), opOK
}

// parseHead is http.parse_head on buf (0 <= start <= end <= len(buf),
// 0 <= scan <= end): its result, with out written as it says, and the
// number of bytes it looked at.
func parseHead(buf []byte, start, scan, end, fields int64, out *[httpOutLen]int64) (code, looked int64) {
	first := start
	lim := min(end, start+httpHeadMax)
	for lim-start >= 2 && buf[start] == '\r' && buf[start+1] == '\n' {
		start += 2
	}
	scan = max(scan, start)
	hend := int64(-1)
	if scan < lim {
		if i := bytes.Index(buf[scan:lim], crlfcrlf); i >= 0 {
			hend = scan + int64(i)
		}
	}
	stop := lim
	if hend >= 0 {
		stop = hend + 4
	}
	looked = max(stop, scan) - first
	for x := scan; x < stop; { // every LF ends a CR LF (RFC 9112 2.2)
		i := bytes.IndexByte(buf[x:stop], '\n')
		if i < 0 {
			break
		}
		p := x + int64(i)
		if p <= start || buf[p-1] != '\r' {
			return -400, looked
		}
		x = p + 1
	}
	if hend < 0 {
		if lim < end {
			return -431, looked // no end of head in httpHeadMax bytes
		}
		out[httpOutStart], out[httpOutScan] = start, start
		if end-start >= 3 { // the CR LF CR LF may straddle the next read
			out[httpOutScan] = end - 3
		}
		return -1, looked
	}
	looked += hend + 4 - start
	return parseRequest(buf, start, hend, fields, out), looked
}

var crlfcrlf = []byte("\r\n\r\n")

// parseRequest parses the head buf[start:hend+4] (hend: its CR LF CR LF)
// into out and returns the offset past it, or the status to refuse it
// with, negated. The checks run in the order of the bytecode parser it
// replaced, so that a head with two faults is refused for the same one.
func parseRequest(buf []byte, start, hend, fields int64, out *[httpOutLen]int64) int64 {
	x := hend + 2
	head := buf[:x]
	if bytes.IndexByte(head[start:], 0) >= 0 { // no NUL (RFC 9110 5.5)
		return -400
	}
	eol := start + int64(bytes.Index(head[start:], crlf)) // the request line's end
	line := head[start:eol]
	if bytes.IndexByte(line, '\r') >= 0 { // a bare CR
		return -400
	}
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return -400
	}
	method := int64(0) // another token: 501 below
	for i, m := range httpMethods {
		if string(line[:sp1]) == m {
			method = int64(i + 1)
			break
		}
	}
	sp2 := bytes.IndexByte(line[sp1+1:], ' ')
	if sp2 <= 0 { // no target, or an empty one
		return -400
	}
	sp2 += sp1 + 1
	keep, v11 := int64(1), int64(1)
	switch string(line[sp2+1:]) { // the version: exactly HTTP/1.1 or /1.0
	case "HTTP/1.1":
	case "HTTP/1.0":
		keep, v11 = 0, 0 // HTTP/1.0: close unless asked
	default:
		return -400
	}
	length, seen, hosts, nf := int64(-1), false, 0, int64(0)
	for at := eol + 2; at < x; {
		nf++
		if nf > fields {
			return -431
		}
		le := at + int64(bytes.Index(head[at:], crlf))
		line := head[at:le]
		if bytes.IndexByte(line, '\r') >= 0 { // a bare CR (RFC 9110 5.5)
			return -400
		}
		co := bytes.IndexByte(line, ':')
		if co <= 0 { // no colon, or an empty name
			return -400
		}
		name := line[:co]
		if bytes.IndexByte(name, ' ') >= 0 || name[0] == '\t' { // white space in the name (or obs-fold)
			return -400
		}
		v := bytes.TrimRight(bytes.TrimLeft(line[co+1:], " \t"), " \t")
		switch {
		case asciiFoldEq(name, "content-length"):
			n, ok := httpDigits(v)
			if !ok || seen && n != length { // two lengths: which frames the body is ambiguous (RFC 9112 6.3)
				return -400
			}
			length, seen = n, true
		case asciiFoldEq(name, "connection"):
			if asciiFoldEq(v, "close") {
				keep = 0
			} else if asciiFoldEq(v, "keep-alive") {
				keep = 1
			}
		case asciiFoldEq(name, "transfer-encoding"):
			return -501 // no chunked bodies
		case asciiFoldEq(name, "host"):
			hosts++
		}
		at = le + 2
	}
	if hosts > 1 || v11 == 1 && hosts == 0 { // one Host in HTTP/1.1, at most one in HTTP/1.0 (RFC 9112 3.2)
		return -400
	}
	if method == 0 {
		return -501
	}
	out[httpOutStart], out[httpOutScan], out[httpOutMethod] = start, hend+4, method
	out[httpOutTarget], out[httpOutTargetEnd] = start+int64(sp1)+1, start+int64(sp2)
	out[httpOutKeep], out[httpOutV11], out[httpOutLength], out[httpOutFields] = keep, v11, length, nf
	return hend + 4
}

var crlf = []byte("\r\n")

// httpDigits reads a Content-Length: one digit at least, digits only (no
// sign, no blank), at most MaxInt64.
func httpDigits(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n := int64(0)
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// asciiFoldEq reports whether b equals the lower-case word w, ASCII
// letters' case ignored.
func asciiFoldEq(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		if lowerASCII(b[i]) != w[i] {
			return false
		}
	}
	return true
}
