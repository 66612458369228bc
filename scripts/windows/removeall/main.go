// Command removeall shows, with Go's own os package alone, the Wine
// limitation that scripts/windows/run.sh works around with a build
// overlay: under Wine 8, os.RemoveAll of a directory that is not empty
// fails with "unlinkat …: Invalid function" (Go's Windows unlinkat sets
// FileDispositionInformationEx, Wine 8 answers STATUS_NOT_IMPLEMENTED, and
// Go falls back to the older call only for the statuses Windows gives), so
// every t.TempDir cleanup of a directory a test wrote into fails, while
// os.Remove of each entry works. It prints what each call returned and
// exits 1 if RemoveAll failed where the entry-by-entry removal succeeded.
//
//	GOOS=windows go build -o removeall.exe ./scripts/windows/removeall
//	wine64 removeall.exe
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	mk := func() string {
		d, err := os.MkdirTemp("", "removeall")
		if err != nil {
			fmt.Fprintln(os.Stderr, "removeall:", err)
			os.Exit(2)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "removeall:", err)
			os.Exit(2)
		}
		return d
	}
	d := mk()
	errAll := os.RemoveAll(d)
	fmt.Printf("os.RemoveAll(dir with one file): %v\n", errAll)
	d2 := mk()
	errOne := os.Remove(filepath.Join(d2, "f"))
	if errOne == nil {
		errOne = os.Remove(d2)
	}
	fmt.Printf("os.Remove(file), os.Remove(dir): %v\n", errOne)
	if errAll != nil && errOne == nil {
		os.Exit(1)
	}
}
