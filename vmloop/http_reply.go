package vmloop

import (
	"fmt"
	"strconv"
)

// http.put_head (ABI 1.8) writes an HTTP/1.1 reply head into a bytes
// object in one step, run by the VM loop itself (Family.InVM), so that
// std/http's reply writer queues a head with one instruction and not
// some forty, and copies its pieces with one copy each and not a bcopy
// per piece. std/http's TestReplyAgrees holds the writer that uses it
// to the writer that copied the pieces one by one.
//
//	intr r, http.put_head, out, at, code, hdrs, length, conn
//
// writes, at out[at:], the status line of code ("HTTP/1.1 200 OK" for
// the codes of httpReasons, else "HTTP/1.1 " code " " with an empty
// reason), the header lines hdrs as they are (each should end with CR
// LF), "Content-Length: " length when length >= 0 (-1: none), the
// Connection line of conn (0 none, 1 "close", 2 "keep-alive") and the
// empty line that ends the head. The result r is the offset past the
// head, or -1 when it does not fit in out[at:] or is over httpReplyMax
// bytes; then out is not written.
//
// The step is bounded: it copies httpReplyMax bytes at most and costs
// httpHeadCost plus one reduction per 64 bytes it writes (S-6).

// httpReplyMax bounds the head one http.put_head writes: a longer one
// (a large hdrs) is refused with -1, and the caller writes it in pieces.
const httpReplyMax = 64 << 10

// httpReasons are the status lines std/http writes with a reason phrase
// (RFC 9110 15); a code not here gets an empty one.
var httpReasons = map[int64]string{
	200: "HTTP/1.1 200 OK\r\n",
	201: "HTTP/1.1 201 Created\r\n",
	204: "HTTP/1.1 204 No Content\r\n",
	400: "HTTP/1.1 400 Bad Request\r\n",
	404: "HTTP/1.1 404 Not Found\r\n",
	405: "HTTP/1.1 405 Method Not Allowed\r\n",
	408: "HTTP/1.1 408 Request Timeout\r\n",
	411: "HTTP/1.1 411 Length Required\r\n",
	413: "HTTP/1.1 413 Content Too Large\r\n",
	414: "HTTP/1.1 414 URI Too Long\r\n",
	431: "HTTP/1.1 431 Request Header Fields Too Large\r\n",
	500: "HTTP/1.1 500 Internal Server Error\r\n",
	501: "HTTP/1.1 501 Not Implemented\r\n",
	503: "HTTP/1.1 503 Service Unavailable\r\n",
	507: "HTTP/1.1 507 Insufficient Storage\r\n",
}

// httpConnLines are the Connection lines of http.put_head's conn.
var httpConnLines = [...]string{"", "Connection: close\r\n", "Connection: keep-alive\r\n"}

// httpPutHead runs http.put_head (window a..a+5, result in a).
func (e *Exec) httpPutHead(ins Instr, r regs, left int64) (int64, opStatus) {
	h := &e.heap
	a := ins.A()
	oo := h.get(r.ref(a), KindBytes)
	if oo == nil {
		e.badHandle(r.ref(a), KindBytes)
		return left, opTrap
	}
	ho := h.get(r.ref(a+3), KindBytes)
	if ho == nil {
		e.badHandle(r.ref(a+3), KindBytes)
		return left, opTrap
	}
	out, hdrs := oo.bytes(), ho.bytes()
	at, code, length, conn := r.i(a+1), r.i(a+2), r.i(a+4), r.i(a+5)
	if at < 0 || at > int64(len(out)) {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("http.put_head: at %d in length %d (need 0 <= at <= length)", at, len(out))}
		return left, opTrap
	}
	if length < -1 || conn < 0 || conn >= int64(len(httpConnLines)) {
		e.x().trap = TrapInfo{Code: TrapBounds, Msg: fmt.Sprintf("http.put_head: length %d, conn %d (need length >= -1: -1 for none; conn 0 none, 1 close, 2 keep-alive)", length, conn)}
		return left, opTrap
	}
	n := putHead(out, at, code, hdrs, length, conn)
	r.setI(a, n)
	if n < 0 {
		return left - httpHeadCost, opOK
	}
	return left - httpHeadCost - charge(n-at), opOK
}

// putHead is http.put_head on checked arguments: it writes the head at
// out[at:] and returns the offset past it, or -1 (nothing written) when
// it does not fit or is over httpReplyMax.
func putHead(out []byte, at, code int64, hdrs []byte, length, conn int64) int64 {
	var num [40]byte // the status line of a code without a reason phrase
	status, ok := httpReasons[code]
	var sl []byte
	if !ok {
		sl = append(strconv.AppendInt(append(num[:0], "HTTP/1.1 "...), code, 10), " \r\n"...)
	}
	cl := httpConnLines[conn]
	var digits [20]byte
	var ln []byte
	if length >= 0 {
		ln = strconv.AppendInt(digits[:0], length, 10)
	}
	size := int64(len(status)+len(sl)+len(hdrs)+len(cl)) + 2
	if ln != nil {
		size += int64(len("Content-Length: \r\n") + len(ln))
	}
	if size > httpReplyMax || size > int64(len(out))-at {
		return -1
	}
	w := out[at : at+size]
	k := copy(w, status)
	k += copy(w[k:], sl)
	k += copy(w[k:], hdrs)
	if ln != nil {
		k += copy(w[k:], "Content-Length: ")
		k += copy(w[k:], ln)
		k += copy(w[k:], "\r\n")
	}
	k += copy(w[k:], cl)
	copy(w[k:], "\r\n")
	return at + size
}
