package examples_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/internal/testkit"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// The RESP parser of resp_ping.jasm is tested here without sockets: the
// program's resp_test function feeds chunks of bytes to resp_parse exactly
// as a connection task feeds it reads, and returns what it would write.

// respProg loads resp_ping.jasm on a fresh one-worker runtime.
func respProg(t testing.TB) (*jade.Runtime, *vmloop.Program) {
	t.Helper()
	src, err := os.ReadFile("resp_ping.jasm")
	require.NoError(t, err)
	rt := testkit.Runtime(t, jade.Options{Workers: 1})
	p, err := rt.Load("resp_ping.jasm", src)
	require.NoError(t, err)
	return rt, p
}

// parseResult is what resp_test reports.
type parseResult struct {
	out    string // every byte the connection would write
	closed bool   // the connection would be closed (protocol error)
	left   int    // unparsed bytes kept for the next read
}

// feed runs resp_test on chunks with an input buffer of insize bytes.
func feed(t testing.TB, rt *jade.Runtime, p *vmloop.Program, insize int, chunks ...[]byte) parseResult {
	t.Helper()
	vs := make([]vmloop.Value, len(chunks))
	for i, c := range chunks {
		vs[i] = vmloop.Bytes(c)
	}
	arr, err := vmloop.Array(vmloop.KindBytes, vs...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := rt.Run(ctx, p, "resp_test", arr, vmloop.I64(int64(insize)))
	require.NoError(t, err)
	require.Equal(t, sched.Success, o.Kind, "resp_test: %s", o)
	el := o.Value.Elems()
	require.Len(t, el, 3, "resp_test returned %v", o.Value)
	left, err := strconv.Atoi(el[2].String())
	require.NoError(t, err)
	return parseResult{out: string(el[0].BytesData()), closed: el[1].String() == "1", left: left}
}

// unknownReply is redis 7's reply to an unknown command: the name and
// arguments cut as its "%.128s" and "'%.*s' " formats cut them, \r and \n
// mapped to spaces.
func unknownReply(cmd string, args ...string) string {
	if len(cmd) > 128 {
		cmd = cmd[:128]
	}
	var a strings.Builder
	for _, s := range args {
		if a.Len() >= 128 {
			break
		}
		if room := 128 - a.Len(); len(s) > room {
			s = s[:room]
		}
		fmt.Fprintf(&a, "'%s' ", s)
	}
	msg := fmt.Sprintf("unknown command '%s', with args beginning with: %s", cmd, a.String())
	msg = strings.NewReplacer("\r", " ", "\n", " ").Replace(msg)
	return "-ERR " + msg + "\r\n"
}

// multibulk encodes a request as a RESP array of bulk strings.
func multibulk(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

const (
	pong      = "+PONG\r\n"
	wrongArgs = "-ERR wrong number of arguments for 'ping' command\r\n"
)

// respCase is one request (or a few) and the exact reply.
type respCase struct {
	name, in, want string
	closed         bool // a protocol error: the connection is closed after want
}

func respCases() []respCase {
	long := strings.Repeat("x", 300)
	big := strings.Repeat("0123456789abcdef", 100_000/16)
	return []respCase{
		{"inline", "PING\r\n", pong, false},
		{"inline-lf", "PING\n", pong, false},
		{"inline-lower", "ping\r\n", pong, false},
		{"inline-mixed", "PiNg\r\n", pong, false},
		{"inline-spaces", "  PING \t \r\n", pong, false},
		{"multibulk", "*1\r\n$4\r\nPING\r\n", pong, false},
		{"multibulk-lower", "*1\r\n$4\r\nping\r\n", pong, false},
		{"inline-arg", "PING hello\r\n", bulk("hello"), false},
		{"inline-arg-lower", "ping msg\n", bulk("msg"), false},
		{"multibulk-arg", multibulk("PING", "msg"), bulk("msg"), false},
		{"multibulk-arg-empty", multibulk("PING", ""), bulk(""), false},
		{"multibulk-arg-binary", multibulk("ping", "a\x00\r\nb\xff"), bulk("a\x00\r\nb\xff"), false},
		{"multibulk-arg-big", multibulk("PING", big), bulk(big), false},
		{"inline-too-many", "PING a b\r\n", wrongArgs, false},
		{"multibulk-too-many", multibulk("PING", "a", "b", "c"), wrongArgs, false},
		{"empty-line", "\r\n", "", false},
		{"blank-line", "   \r\n", "", false},
		{"multibulk-zero", "*0\r\n", "", false},
		{"multibulk-negative", "*-1\r\n", "", false},
		{"unknown-inline", "GET foo\r\n", unknownReply("GET", "foo"), false},
		{"unknown-noargs", "FOO\r\n", unknownReply("FOO"), false},
		{"unknown-pin", "PIN\r\n", unknownReply("PIN"), false},
		{"unknown-pings", "PINGS\r\n", unknownReply("PINGS"), false},
		{"unknown-multibulk", multibulk("set", "k", "v"), unknownReply("set", "k", "v"), false},
		{"unknown-crlf-arg", multibulk("GET", "a\r\nb"), unknownReply("GET", "a\r\nb"), false},
		{"unknown-long", multibulk(long, long, "b"), unknownReply(long, long, "b"), false},
		{"unknown-many", "X " + strings.Repeat("ab ", 100) + "\r\n",
			unknownReply("X", strings.Fields(strings.Repeat("ab ", 100))...), false},
		{"bad-count", "*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true},
		{"bad-count-zero-prefix", "*01\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true},
		{"bad-count-huge", "*2000000\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true},
		{"bad-count-empty", "*\r\n", "-ERR Protocol error: invalid multibulk length\r\n", true},
		{"no-dollar", "*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'\r\n", true},
		{"no-dollar-cr", "*1\r\n\r\n", "-ERR Protocol error: expected '$', got ' '\r\n", true},
		{"bad-bulk-len", "*1\r\n$abc\r\n", "-ERR Protocol error: invalid bulk length\r\n", true},
		{"bad-bulk-negative", "*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length\r\n", true},
		{"bad-bulk-huge", "*1\r\n$600000\r\n", "-ERR Protocol error: invalid bulk length\r\n", true},
		{"too-big-inline", strings.Repeat("a", 70_000), "-ERR Protocol error: too big inline request\r\n", true},
		{"too-big-count", "*" + strings.Repeat("1", 70_000), "-ERR Protocol error: too big mbulk count string\r\n", true},
		{"too-big-bulk-count", "*1\r\n$" + strings.Repeat("1", 70_000), "-ERR Protocol error: too big bulk count string\r\n", true},
		{"pipeline-then-error", "PING\r\n" + multibulk("PING") + "*x\r\nPING\r\n",
			pong + pong + "-ERR Protocol error: invalid multibulk length\r\n", true},
	}
}

// TestRespParse checks every case fed in one piece, with the default
// buffer and with a tiny one that has to grow.
func TestRespParse(t *testing.T) {
	rt, p := respProg(t)
	for _, c := range respCases() {
		for _, insize := range []int{16384, 7} {
			t.Run(fmt.Sprintf("%s/in=%d", c.name, insize), func(t *testing.T) {
				r := feed(t, rt, p, insize, []byte(c.in))
				if r.out != c.want || r.closed != c.closed {
					t.Fatalf("in %q:\n got %q closed=%v\nwant %q closed=%v", trunc(c.in), trunc(r.out), r.closed, trunc(c.want), c.closed)
				}
				if !c.closed && r.left != 0 {
					t.Fatalf("%d bytes left unparsed", r.left)
				}
			})
		}
	}
}

// TestRespParseSplit splits each short case (and a pipeline of all of
// them) at every byte boundary: the replies must not change.
func TestRespParseSplit(t *testing.T) {
	rt, p := respProg(t)
	var all, allWant strings.Builder
	for _, c := range respCases() {
		if len(c.in) > 400 {
			continue
		}
		if !c.closed {
			all.WriteString(c.in)
			allWant.WriteString(c.want)
		}
		t.Run(c.name, func(t *testing.T) {
			for i := 1; i < len(c.in); i++ {
				r := feed(t, rt, p, 16384, []byte(c.in[:i]), []byte(c.in[i:]))
				if r.out != c.want || r.closed != c.closed {
					t.Fatalf("split at %d of %q:\n got %q closed=%v\nwant %q", i, c.in, r.out, r.closed, c.want)
				}
			}
		})
	}
	in, want := all.String(), allWant.String()
	t.Run("pipeline", func(t *testing.T) {
		for i := 0; i <= len(in); i++ {
			r := feed(t, rt, p, 64, []byte(in[:i]), []byte(in[i:]))
			if r.out != want || r.closed || r.left != 0 {
				t.Fatalf("split at %d: got %q closed=%v left=%d\nwant %q", i, r.out, r.closed, r.left, want)
			}
		}
	})
	t.Run("bytewise", func(t *testing.T) {
		chunks := make([][]byte, len(in))
		for i := range in {
			chunks[i] = []byte{in[i]}
		}
		if r := feed(t, rt, p, 16384, chunks...); r.out != want || r.closed || r.left != 0 {
			t.Fatalf("one byte per read: got %q closed=%v left=%d\nwant %q", r.out, r.closed, r.left, want)
		}
	})
}

// TestRespParseRandom feeds random pipelines of requests cut into random
// chunks, through input buffers of random sizes.
func TestRespParseRandom(t *testing.T) {
	rt, p := respProg(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []respCase
	for _, c := range respCases() {
		if !c.closed {
			cases = append(cases, c)
		}
	}
	for round := 0; round < 200; round++ {
		var in, want strings.Builder
		for n := rng.IntN(40); n >= 0; n-- {
			c := cases[rng.IntN(len(cases))]
			in.WriteString(c.in)
			want.WriteString(c.want)
		}
		b := []byte(in.String())
		var chunks [][]byte
		for len(b) > 0 {
			k := min(len(b), 1+rng.IntN(1+rng.IntN(4096)))
			chunks = append(chunks, b[:k])
			b = b[k:]
		}
		insize := []int{1, 5, 64, 16384}[rng.IntN(4)]
		if r := feed(t, rt, p, insize, chunks...); r.out != want.String() || r.closed || r.left != 0 {
			t.Fatalf("round %d (in=%d, %d chunks): got %d bytes %q closed=%v left=%d, want %d bytes %q",
				round, insize, len(chunks), len(r.out), trunc(r.out), r.closed, r.left, want.Len(), trunc(want.String()))
		}
	}
}

// TestRespParseBatch: thousands of pipelined PINGs in one read overflow
// the 16 KiB output buffer; the replies come out complete and in order, and
// a partial request at the end is kept for the next read.
func TestRespParseBatch(t *testing.T) {
	rt, p := respProg(t)
	var in strings.Builder
	var want strings.Builder
	for i := 0; i < 5000; i++ {
		if i%2 == 0 {
			in.WriteString("PING\r\n")
			want.WriteString(pong)
		} else {
			in.WriteString(multibulk("PING", strconv.Itoa(i)))
			want.WriteString(bulk(strconv.Itoa(i)))
		}
	}
	in.WriteString("*1\r\n$4\r\nPI")
	r := feed(t, rt, p, 1<<20, []byte(in.String()))
	if r.out != want.String() || r.closed || r.left != len("*1\r\n$4\r\nPI") {
		t.Fatalf("got %d bytes closed=%v left=%d, want %d bytes", len(r.out), r.closed, r.left, want.Len())
	}
	// A request larger than the whole input buffer limit (1 MiB).
	huge := "*3\r\n$4\r\nPING\r\n$524288\r\n" + strings.Repeat("a", 524288) + "\r\n$524288\r\n" + strings.Repeat("b", 524288) + "\r\n"
	r = feed(t, rt, p, 16384, []byte(huge))
	if want := "-ERR Protocol error: too big request\r\n"; r.out != want || !r.closed {
		t.Fatalf("huge request: got %q closed=%v, want %q", trunc(r.out), r.closed, want)
	}
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}
