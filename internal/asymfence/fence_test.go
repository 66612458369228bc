package asymfence_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/asymfence"
	"github.com/jadevm/jade/internal/relstore"
)

// dekker runs n rounds of the store-then-load pair: in round i the light
// side stores i in x with light and loads y, the heavy side stores i in y
// (sequentially consistent), calls heavy and loads x. It returns the
// rounds in which neither load saw the other side's store. Each side
// starts a round once the other has finished the one before, so that the
// two stores and loads race within nanoseconds.
func dekker(n int, light func(*atomic.Uint32, uint32), heavy func()) int {
	var x, y, lDone, hDone atomic.Uint32
	r1 := make([]uint32, n+1)
	r2 := make([]uint32, n+1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		for i := uint32(1); i <= uint32(n); i++ {
			for hDone.Load() < i-1 {
			}
			light(&x, i)
			r1[i] = y.Load()
			lDone.Store(i)
		}
	}()
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		for i := uint32(1); i <= uint32(n); i++ {
			for lDone.Load() < i-1 {
			}
			y.Store(i)
			heavy()
			r2[i] = x.Load()
			hDone.Store(i)
		}
	}()
	wg.Wait()
	both := 0
	for i := 1; i <= n; i++ {
		if r1[i] < uint32(i) && r2[i] < uint32(i) {
			both++
		}
	}
	return both
}

// TestOneLoadSeesTheOtherStore is the store-buffering litmus test on the
// asymmetric pair: at least one side's load sees the other side's store
// in every round. The same rounds with a release store and no barrier
// show the reordering the barrier prevents (logged: how often depends on
// the machine).
func TestOneLoadSeesTheOtherStore(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		t.Skip("asymfence: the two sides need two CPUs to race")
	}
	n := 50_000
	if testing.Short() {
		n = 10_000
	}
	t.Logf("asymmetric: %v", asymfence.Asymmetric())
	require.Zero(t, dekker(n, asymfence.StoreUint32, asymfence.Heavy), "rounds in which neither load saw the other store")
	t.Logf("without the barrier: %d of %d rounds saw neither store", dekker(n, relstore.Uint32, func() {}), n)
}

func ExampleStoreUint32() {
	var busy, revoked atomic.Uint32
	credits := 3
	// The light side (often): mark the section, then look at the other
	// side's word before touching what it guards.
	asymfence.StoreUint32(&busy, 1)
	if revoked.Load() == 0 {
		credits--
	}
	asymfence.StoreUint32(&busy, 0)
	// The heavy side (seldom): its store, the barrier, then its look.
	revoked.Store(1)
	asymfence.Heavy()
	if busy.Load() == 0 {
		fmt.Println("credits", credits)
	}
	// Output: credits 2
}
