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

// vmRow is the row of an intrinsic the VM loop runs itself: what it runs
// for it (the http family's rows, and loneRows).
type vmRow struct {
	run func(e *Exec, ins Instr, r regs, left int64) (int64, opStatus)
}

// httpRows are the rows of the http family; TestHTTPRows fails for an
// http.* intrinsic without one.
var httpRows = map[IntrinsicID]vmRow{
	IntrHTTPParseHead: {run: (*Exec).httpParseHead},
	IntrHTTPPutHead:   {run: (*Exec).httpPutHead},
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
//
// On its first look at a head (scan at its first byte) it tries
// parseHeadFast, which takes a well-formed head that is all there in one
// pass. Otherwise it goes from LF to LF: each LF from scan on must end a
// CR LF (RFC 9112 2.2), and the first LF that ends a CR LF CR LF starting
// at scan or later ends the head, which parseRequest parses. Either way
// the bytes looked at are counted as if the search and the parse each
// read the head whole: from the first byte to the end of the head (or to
// the search's limit when the head has not all come, past a bare LF
// included), and the head once more when it is parsed.
func parseHead(buf []byte, start, scan, end, fields int64, out *[httpOutLen]int64) (code, looked int64) {
	first := start
	lim := min(end, start+httpHeadMax)
	for lim-start >= 2 && buf[start] == '\r' && buf[start+1] == '\n' {
		start += 2
	}
	scan = max(scan, start)
	if scan == start { // the first look at this head: try it as well-formed
		if past := parseHeadFast(buf[:lim], start, fields, out); past >= 0 {
			return past, past - first + past - start
		}
	}
	for x := scan; x < lim; {
		i := bytes.IndexByte(buf[x:lim], '\n')
		if i < 0 {
			break
		}
		p := x + int64(i)
		if p <= start || buf[p-1] != '\r' { // a bare LF, before the end of the head if any
			stop := lim
			if i := bytes.Index(buf[p+1:lim], crlfcrlf); i >= 0 {
				stop = p + 1 + int64(i) + 4
			}
			return -400, stop - first
		}
		if p-3 >= scan && buf[p-2] == '\n' && buf[p-3] == '\r' { // the CR LF CR LF at p-3
			hend := p - 3
			looked = hend + 4 - first // the search
			return parseRequest(buf, start, hend, fields, out), looked + hend + 4 - start
		}
		x = p + 1
	}
	looked = max(lim, scan) - first
	if lim < end {
		return -431, looked // no end of head in httpHeadMax bytes
	}
	out[httpOutStart], out[httpOutScan] = start, start
	if end-start >= 3 { // the CR LF CR LF may straddle the next read
		out[httpOutScan] = end - 3
	}
	return -1, looked
}

var crlfcrlf = []byte("\r\n\r\n")

// parseRequest parses the head buf[start:hend+4] (hend: its CR LF CR LF)
// into out and returns the offset past it, or the status to refuse it
// with, negated. The checks run in the order of the bytecode parser it
// replaced, so that a head with two faults is refused for the same one:
// a NUL anywhere first, then the request line's faults, then each field
// line's in turn (the field limit before the line's own), then the Host
// count, and an unknown method last.
func parseRequest(buf []byte, start, hend, fields int64, out *[httpOutLen]int64) int64 {
	head := buf[start : hend+2]        // the lines, each with its CR LF
	if bytes.IndexByte(head, 0) >= 0 { // no NUL (RFC 9110 5.5)
		return -400
	}
	eol, ok := httpLineEnd(head, 0)
	if !ok {
		return -400
	}
	line := head[:eol] // the request line
	sp1 := 0
	for sp1 < len(line) && line[sp1] != ' ' {
		sp1++
	}
	if sp1 == 0 || sp1 == len(line) { // no blank, or an empty method
		return -400
	}
	method := httpMethod(line[:sp1]) // another token: 501 below
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
	f, nf := headFacts{keep: keep, length: -1}, int64(0)
	for at := eol + 2; at < len(head); {
		nf++
		if nf > fields {
			return -431
		}
		le, ok := httpLineEnd(head, at)
		if !ok {
			return -400
		}
		line := head[at:le]
		co := 0 // the colon; no blank before it, and no tab first (obs-fold)
		for co < len(line) && line[co] != ':' {
			if line[co] == ' ' {
				return -400
			}
			co++
		}
		if co == 0 || co == len(line) || line[0] == '\t' {
			return -400
		}
		name, v := line[:co], trimBlank(line[co+1:])
		if c := f.field(name, v); c != 0 {
			return c
		}
		at = le + 2
	}
	if !f.hostsOK(v11) {
		return -400
	}
	if method == 0 {
		return -501
	}
	f.put(out, start, hend+4, method, start+int64(sp1)+1, start+int64(sp2), v11, nf)
	return hend + 4
}

// headFacts is what a head's field lines say about its request, shared by
// the general parser (parseRequest) and its fast path (parseHeadFast).
type headFacts struct {
	keep   int64 // 1: the connection stays open after the reply
	length int64 // Content-Length, -1 when none
	seen   bool  // a Content-Length was seen
	hosts  int   // Host fields
}

// field takes in one field line, its name and its value (blanks trimmed),
// and returns 0, or the status to refuse the head with, negated: -400 for
// a bad Content-Length or two that differ (which frames the body is then
// ambiguous, RFC 9112 6.3), -501 for a Transfer-Encoding (no chunked
// bodies).
func (f *headFacts) field(name, v []byte) int64 {
	switch len(name) { // the names differ in length
	case len("content-length"):
		if asciiFoldEq(name, "content-length") {
			n, ok := httpDigits(v)
			if !ok || f.seen && n != f.length {
				return -400
			}
			f.length, f.seen = n, true
		}
	case len("connection"):
		switch {
		case !asciiFoldEq(name, "connection"):
		case asciiFoldEq(v, "close"):
			f.keep = 0
		case asciiFoldEq(v, "keep-alive"):
			f.keep = 1
		}
	case len("transfer-encoding"):
		if asciiFoldEq(name, "transfer-encoding") {
			return -501
		}
	case len("host"):
		if asciiFoldEq(name, "host") {
			f.hosts++
		}
	}
	return 0
}

// put writes the head start..past that f describes into out: its method,
// its target buf[target:targetEnd], its version v11 and its nf fields.
func (f *headFacts) put(out *[httpOutLen]int64, start, past, method, target, targetEnd, v11, nf int64) {
	out[httpOutStart], out[httpOutScan], out[httpOutMethod] = start, past, method
	out[httpOutTarget], out[httpOutTargetEnd] = target, targetEnd
	out[httpOutKeep], out[httpOutV11], out[httpOutLength], out[httpOutFields] = f.keep, v11, f.length, nf
}

// hostsOK reports whether the head has one Host field (HTTP/1.1, v11 1)
// or at most one (HTTP/1.0), RFC 9112 3.2.
func (f *headFacts) hostsOK(v11 int64) bool {
	return f.hosts <= 1 && (v11 == 0 || f.hosts == 1)
}

// httpLineEnd returns the end of the line of head that starts at at (its
// CR LF's offset), and false when a CR comes before the CR LF (a bare CR,
// RFC 9110 5.5). head ends with a CR LF, and at is a line's start.
func httpLineEnd(head []byte, at int) (int, bool) {
	cr := at + bytes.IndexByte(head[at:], '\r')
	return cr, head[cr+1] == '\n'
}

// trimBlank returns v without the spaces and tabs at its ends.
func trimBlank(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// httpMethod returns the code of the method m (its place in httpMethods,
// from 1), 0 for another token.
func httpMethod(m []byte) int64 {
	for i, name := range httpMethods {
		if string(m) == name {
			return int64(i + 1)
		}
	}
	return 0
}

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
