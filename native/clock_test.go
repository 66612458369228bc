package native

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/jadevm/jade/internal/vmhook"
)

// diffNow is what time.now reads in this package's tests: each read
// advances it by 1 ms. time.now runs in the VM loop (no request the
// differential tests could answer alike for both loops), so runDiff
// gives the two loops the same reads: it sets the clock back before the
// native loop runs the slice the Go loop ran.
var diffNow atomic.Int64

func TestMain(m *testing.M) {
	vmhook.SetClock(func() int64 { return diffNow.Add(1_000_000) })
	os.Exit(m.Run())
}
