package vmloop

import "bytes"

// The parser http.parse_head ran before its single pass, kept as the
// reference TestParseHeadOldNew and FuzzParseHeadOldNew hold the parser
// to: the same code, the same out array and the same bytes looked at,
// for every input.

// refParseHead is http.parse_head on buf (0 <= start <= end <= len(buf),
// 0 <= scan <= end): its result, with out written as it says, and the
// number of bytes it looked at.
func refParseHead(buf []byte, start, scan, end, fields int64, out *[httpOutLen]int64) (code, looked int64) {
	first := start
	lim := min(end, start+httpHeadMax)
	for lim-start >= 2 && buf[start] == '\r' && buf[start+1] == '\n' {
		start += 2
	}
	scan = max(scan, start)
	hend := int64(-1)
	if scan < lim {
		if i := bytes.Index(buf[scan:lim], refCRLFCRLF); i >= 0 {
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
	return refParseRequest(buf, start, hend, fields, out), looked
}

var refCRLFCRLF = []byte("\r\n\r\n")

// refParseRequest parses the head buf[start:hend+4] (hend: its CR LF CR LF)
// into out and returns the offset past it, or the status to refuse it
// with, negated. The checks run in the order of the bytecode parser it
// replaced, so that a head with two faults is refused for the same one.
func refParseRequest(buf []byte, start, hend, fields int64, out *[httpOutLen]int64) int64 {
	x := hend + 2
	head := buf[:x]
	if bytes.IndexByte(head[start:], 0) >= 0 { // no NUL (RFC 9110 5.5)
		return -400
	}
	eol := start + int64(bytes.Index(head[start:], refCRLF)) // the request line's end
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
		le := at + int64(bytes.Index(head[at:], refCRLF))
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
		case refASCIIFoldEq(name, "content-length"):
			n, ok := refHTTPDigits(v)
			if !ok || seen && n != length { // two lengths: which frames the body is ambiguous (RFC 9112 6.3)
				return -400
			}
			length, seen = n, true
		case refASCIIFoldEq(name, "connection"):
			if refASCIIFoldEq(v, "close") {
				keep = 0
			} else if refASCIIFoldEq(v, "keep-alive") {
				keep = 1
			}
		case refASCIIFoldEq(name, "transfer-encoding"):
			return -501 // no chunked bodies
		case refASCIIFoldEq(name, "host"):
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

var refCRLF = []byte("\r\n")

// refHTTPDigits reads a Content-Length: one digit at least, digits only (no
// sign, no blank), at most MaxInt64.
func refHTTPDigits(v []byte) (int64, bool) {
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

// refASCIIFoldEq reports whether b equals the lower-case word w, ASCII
// letters' case ignored.
func refASCIIFoldEq(b []byte, w string) bool {
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
