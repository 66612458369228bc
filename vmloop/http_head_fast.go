package vmloop

import "encoding/binary"

// The fast path of http.parse_head: a well-formed head, parsed in one
// forward pass over its bytes. It accepts only heads the general parser
// (parseRequest, after parseHead's search) accepts, and gives the same
// result and out array for them; on anything else (a fault, a head not
// all there, an unusual byte) it declines, and the general parser runs
// and finds what is wrong and which fault wins. TestParseHeadOldNew holds
// the two to the reference parser.

// Classes of bytes in a head (httpByteClass).
const (
	hbEnd   = 1 << iota // CR, LF, NUL: a line's end, or a fault
	hbBlank             // space, tab
	hbColon             // ':'
)

// httpByteClass is the class of each byte; 0 for a byte of a token or a
// target.
var httpByteClass = [256]uint8{'\r': hbEnd, '\n': hbEnd, 0: hbEnd, ' ': hbBlank, '\t': hbBlank, ':': hbColon}

// parseHeadFast parses the head at b[start:] (start past the empty lines
// before it; b cut at the search's limit) when it is well-formed and all
// there: it writes out and returns the offset past the head, as
// parseRequest does. It returns -1, out not written, for any other head.
//
// It reads the request line as method SP target SP HTTP/1.x CR LF (the
// method one of httpMethods), then field lines as name ':' value CR LF
// (no blank, CR, LF or NUL in the name, no CR, LF or NUL in the value),
// up to the empty line. It declines what parseRequest refuses (too many
// fields, a bad Content-Length or two that differ, a Transfer-Encoding,
// no Host in HTTP/1.1 or two) and also, to stay simple, a tab or a colon
// in the method and a tab in the target or a name, which parseRequest
// may accept.
func parseHeadFast(b []byte, start, fields int64, out *[httpOutLen]int64) int64 {
	i, n := int(start), len(b)
	for i < n && httpByteClass[b[i]] == 0 {
		i++
	}
	if i == int(start) || i >= n || b[i] != ' ' {
		return -1
	}
	sp1 := i
	method := httpMethod(b[start:sp1])
	if method == 0 {
		return -1
	}
	i++
	for i < n && httpByteClass[b[i]]&(hbEnd|hbBlank) == 0 {
		i++
	}
	if i == sp1+1 || i >= n || b[i] != ' ' {
		return -1
	}
	sp2 := i
	i++
	if n-i < 10 || string(b[i:i+7]) != "HTTP/1." || b[i+8] != '\r' || b[i+9] != '\n' {
		return -1
	}
	keep, v11 := int64(1), int64(1)
	switch b[i+7] {
	case '1':
	case '0':
		keep, v11 = 0, 0 // HTTP/1.0: close unless asked
	default:
		return -1
	}
	i += 10
	f, nf := headFacts{keep: keep, length: -1}, int64(0)
	for {
		if i >= n {
			return -1
		}
		if b[i] == '\r' { // the empty line, or a fault
			if i+1 >= n || b[i+1] != '\n' {
				return -1
			}
			break
		}
		nf++
		if nf > fields {
			return -1
		}
		s := i
		for i < n && httpByteClass[b[i]] == 0 {
			i++
		}
		if i == s || i >= n || b[i] != ':' {
			return -1
		}
		name := b[s:i]
		i++
		for i < n && httpByteClass[b[i]] == hbBlank {
			i++
		}
		vs := i
		i = httpValueEnd(b, i)
		if i+1 >= n || b[i] != '\r' || b[i+1] != '\n' {
			return -1
		}
		v := trimBlank(b[vs:i])
		i += 2
		if f.field(name, v) != 0 {
			return -1
		}
	}
	if !f.hostsOK(v11) {
		return -1
	}
	past := int64(i) + 2
	f.put(out, start, past, method, int64(sp1)+1, int64(sp2), v11, nf)
	return past
}

// httpValueEnd returns the offset of the first CR, LF or NUL in b from i
// on, or len(b) when none: eight bytes at a time, then byte by byte.
func httpValueEnd(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; len(b)-i >= 8; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		cr, lf := x^('\r'*ones), x^('\n'*ones)
		if ((x-ones)&^x|(cr-ones)&^cr|(lf-ones)&^lf)&highs != 0 { // a zero byte in x, cr or lf
			break
		}
	}
	for i < len(b) && httpByteClass[b[i]]&hbEnd == 0 {
		i++
	}
	return i
}
