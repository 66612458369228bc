// Command resp-go is the Go baseline of examples/resp_ping.jasm: a Redis
// RESP server that answers PING with one goroutine per connection, on Go's
// net package. It gives the same replies as resp_ping.jasm (+PONG, a bulk
// echo of PING's argument, -ERR for wrong arity, unknown commands and
// protocol errors, closing the connection after a protocol error) and
// batches the replies to pipelined requests into one write per read.
//
//	resp-go -addr 127.0.0.1:6381
//
// scripts/resp-bench.sh runs it under redis-benchmark beside resp_ping.jasm
// and redis-server.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
)

const (
	inlineMax = 64 << 10  // longest inline request or count line (redis: PROTO_INLINE_MAX_SIZE)
	bulkMax   = 512 << 10 // longest bulk argument (as resp_ping.jasm)
	countMax  = 1 << 20   // most arguments of a multibulk request
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6381", "listen address")
	flag.Parse()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("resp-go: listening on %s", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			log.Fatal(err)
		}
		go serve(c)
	}
}

// protoError is a malformed request: its reply is sent, then the
// connection is closed.
type protoError string

// serve answers one connection until EOF, an I/O error or a protocol
// error.
func serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 16<<10)
	w := bufio.NewWriterSize(c, 16<<10)
	for {
		args, err := readRequest(r)
		var pe protoError
		if errors.As(err, &pe) {
			w.WriteString("-ERR Protocol error: " + string(pe) + "\r\n")
			w.Flush()
			return
		}
		if err != nil {
			return
		}
		if len(args) > 0 {
			reply(w, args)
		}
		if r.Buffered() == 0 { // answered everything read so far: one write
			if w.Flush() != nil {
				return
			}
		}
	}
}

func (e protoError) Error() string { return string(e) }

// readLine reads up to and including '\n' (at most inlineMax bytes) and
// returns the line without "\n" or "\r\n". tooBig is the protocol error
// for a longer line.
func readLine(r *bufio.Reader, tooBig string) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if err == nil {
			if line == nil {
				line = frag
			} else {
				line = append(line, frag...)
			}
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		line = append(line, frag...)
		if len(line) > inlineMax {
			return nil, protoError(tooBig)
		}
	}
	if len(line) > inlineMax {
		return nil, protoError(tooBig)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseInt reads a number as redis's string2ll: an optional '-', then 0
// alone or a nonzero digit and more digits.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 || (b[0] == '0' && len(b) > 1) || (len(b) > 1 && b[0] == '-' && b[1] == '0') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	return v, err == nil && b[0] != '+'
}

// readRequest reads one request and returns its arguments (none for an
// empty request).
func readRequest(r *bufio.Reader) ([][]byte, error) {
	first, err := r.Peek(1)
	if err != nil {
		return nil, err
	}
	if first[0] != '*' {
		line, err := readLine(r, "too big inline request")
		if err != nil {
			return nil, err
		}
		return bytes.Fields(line), nil
	}
	line, err := readLine(r, "too big mbulk count string")
	if err != nil {
		return nil, err
	}
	n, ok := parseInt(line[1:])
	if !ok || n > countMax {
		return nil, protoError("invalid multibulk length")
	}
	args := make([][]byte, 0, min(n, 16))
	for i := int64(0); i < n; i++ {
		line, err := readLine(r, "too big bulk count string")
		if err != nil {
			return nil, err
		}
		if len(line) == 0 || line[0] != '$' {
			got := byte(' ')
			if len(line) > 0 && line[0] != '\r' && line[0] != '\n' {
				got = line[0]
			}
			return nil, protoError(fmt.Sprintf("expected '$', got '%c'", got))
		}
		size, ok := parseInt(line[1:])
		if !ok || size < 0 || size > bulkMax {
			return nil, protoError("invalid bulk length")
		}
		arg := make([]byte, size+2)
		if _, err := io.ReadFull(r, arg); err != nil {
			return nil, err
		}
		args = append(args, arg[:size])
	}
	return args, nil
}

// reply writes the answer to one request.
func reply(w *bufio.Writer, args [][]byte) {
	if !bytes.EqualFold(args[0], []byte("ping")) {
		var a []byte
		for _, s := range args[1:] {
			if len(a) >= 128 {
				break
			}
			room := 128 - len(a) // redis: "'%.*s' " with precision 128-sdslen(args)
			a = append(a, '\'')
			a = append(a, s[:min(len(s), room)]...)
			a = append(a, '\'', ' ')
		}
		msg := fmt.Sprintf("unknown command '%s', with args beginning with: %s", args[0][:min(len(args[0]), 128)], a)
		w.WriteString("-ERR " + sanitize(msg) + "\r\n")
		return
	}
	switch len(args) {
	case 1:
		w.WriteString("+PONG\r\n")
	case 2:
		w.WriteByte('$')
		w.WriteString(strconv.Itoa(len(args[1])))
		w.WriteString("\r\n")
		w.Write(args[1])
		w.WriteString("\r\n")
	default:
		w.WriteString("-ERR wrong number of arguments for 'ping' command\r\n")
	}
}

// sanitize keeps an error reply on one line, as redis does.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
