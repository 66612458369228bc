package relstore_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/relstore"
)

// TestPublishesEarlierStores is the message-passing litmus test: a writer
// fills a slot with plain stores, then publishes the slot's index with
// Uint32; a reader that loads the index must see the slot's contents.
// A store reordered after the publish (by the compiler or the machine)
// shows as a slot read with an old value.
func TestPublishesEarlierStores(t *testing.T) {
	const n = 1 << 20
	const ring = 64
	var slots [ring][2]uint64
	var tail, head atomic.Uint32
	done := make(chan int)
	go func() {
		bad := 0
		for i := uint32(0); i < n; {
			if tail.Load() == i {
				runtime.Gosched()
				continue
			}
			s := &slots[i%ring]
			if s[0] != uint64(i) || s[1] != ^uint64(i) {
				bad++
			}
			i++
			head.Store(i)
		}
		done <- bad
	}()
	for i := uint32(0); i < n; i++ {
		for i-head.Load() >= ring {
			runtime.Gosched()
		}
		s := &slots[i%ring]
		s[0], s[1] = uint64(i), ^uint64(i)
		relstore.Uint32(&tail, i+1)
	}
	require.Zero(t, <-done, "slots read before their stores were visible")
}

func ExampleUint32() {
	var tail atomic.Uint32
	relstore.Uint32(&tail, 7)
	fmt.Println(tail.Load())
	// Output: 7
}
