// Package std holds the standard library of Jade assembly: modules a
// program imports with `.import "std/NAME" as NAME` (docs/JASM.md,
// "Modules"). The files are embedded in every binary that links the
// assembler, so `jade run` finds them without flags; a directory on the
// library path (--lib, $JADE_PATH) that holds std/NAME.jasm comes first.
//
// Each module NAME.jasm has tests in NAME_test.jasm: functions named
// test_* that return 0 when every check passes, else the number of the
// failed check. `go test ./std` runs them on both VM loops.
package std

import "embed"

// Files is the standard library: NAME.jasm at the root of the file system
// is the module std/NAME.
//
//go:embed *.jasm
var Files embed.FS
