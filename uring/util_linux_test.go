//go:build linux

package uring

import (
	"os"
	"regexp"
	"runtime"
	"testing"
)

// runtimeLock pins the test goroutine to its thread until the test ends
// (after its deferred Closes, which run first).
func runtimeLock(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

func parseSource(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}

var osUseRE = regexp.MustCompile(`\bos\.([A-Z][A-Za-z]*)`)

func osUses(src string) []string {
	var uses []string
	for _, m := range osUseRE.FindAllStringSubmatch(src, -1) {
		uses = append(uses, m[1])
	}
	return uses
}
