package jasm

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// FuzzAssemble: any input either assembles or yields an ErrorList of
// well-formed positions, never a panic; whatever assembles survives
// Disassemble+Assemble unchanged, and the disassembly is stable.
//
//	go test -fuzz FuzzAssemble ./vmloop/jasm
func FuzzAssemble(f *testing.F) {
	var seeds []string
	for _, pat := range []string{"testdata/*.jasm", "../../examples/*.jasm"} {
		files, _ := filepath.Glob(pat)
		sort.Strings(files)
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				seeds = append(seeds, string(b))
			}
		}
	}
	for _, c := range errorCases {
		seeds = append(seeds, c.src)
	}
	seeds = append(seeds, fuzzExtraSeeds...)
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Assemble("fuzz.jasm", src)
		if err != nil {
			var l ErrorList
			if !errors.As(err, &l) || len(l) == 0 {
				t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
			}
			lines := strings.Count(string(src), "\n") + 1
			for _, e := range l {
				if strings.Contains(e.Msg, "internal assembler error") {
					t.Fatalf("assembler panicked: %v", e)
				}
				if e.Line < 1 || e.File == "fuzz.jasm" && e.Line > lines || e.Col < 1 {
					t.Fatalf("bad position in %v (input has %d lines)", e, lines)
				}
			}
			return
		}
		roundTrip(t, "fuzz", p)
	})
}

var fuzzExtraSeeds = []string{
	"",
	"; only a comment\n",
	".kint 1, 2, 2\n.kflt nan, -0.0, f64bits(0x7ff0000000000002)\n.kstr \"\\x00\\xff\", \"\"\n.import \"weird name\", io.print_i64\n",
	".func \"odd name\"(i64, f64) -> f64\n  .regs 9\n  .word 0xffffffffffffffff\n  movf r1, r1\n  ret r1\n.end\n",
	".func f(t:ref)\n  .local v:i64, w:f64, x:ref\n  join v, t\n  join w, t\n  join x, t\n  join _, t\n  yield\n  retv\n.end\n",
	".func f(a:i64) -> i64\nl: jeqi a, -32768, l\n  jgti a, 32767, l\n  tailcall f, a\n.end\n",
	// Modules: Assemble finds only the built-in std (a position in an
	// error may be one of its files).
	".import \"std/bytes\" as b\n.abi 1.3\n.func main() -> i64\n  .local r:i64\n  call r, b.hex_digit, 0x41\n  ret r\n.end\n",
	".import \"std/bytes\" as b\n.import \"nope\" as n\n.func \"b.is_space\"()\n  retv\n.end\n",
}
