package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAsmDisPCs: jade asm --dis --pcs prints each instruction's pc beside
// its source file:line, from a .jasm and from the .jbc built from it (the
// binary form keeps the file name); the text still assembles. There was no
// --pcs flag before.
func TestAsmDisPCs(t *testing.T) {
	src := ".func main() -> i64\n  .local n:i64\n  const n, 5\n\n  addi n, n, 1\n  ret n\n.end\n"
	path := write(t, "p.jasm", src)
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"asm", "--dis", "--pcs", path}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "; @0 "+path+":3\n")
	require.Contains(t, out.String(), "; @1 "+path+":5\n")
	require.Contains(t, out.String(), "; @2 "+path+":6\n")

	bin := filepath.Join(t.TempDir(), "p.jbc")
	require.Equal(t, 0, run([]string{"asm", "-o", bin, path}, &out, &errb), errb.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"asm", "--dis", "--pcs", bin}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "; @1 "+path+":5\n")

	dis := write(t, "d.jasm", out.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"run", dis}, &out, &errb), errb.String())
	require.Equal(t, "6\n", out.String())
}
