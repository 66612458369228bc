package tinylock_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/tinylock"
)

// TestExcludes hammers one lock from more goroutines than processors
// (holders get descheduled while they hold it): a read-modify-write of
// plain words under the lock loses no update, and the race detector sees
// every holder ordered after the one before.
func TestExcludes(t *testing.T) {
	const goroutines, rounds = 16, 20_000
	var mu tinylock.Mutex
	var a, b int
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				mu.Lock()
				a++
				if i%97 == 0 {
					runtime.Gosched() // a holder that stops running
				}
				b += 2
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, goroutines*rounds, a)
	require.Equal(t, 2*goroutines*rounds, b)
}

// TestWaitsOutALongHolder holds the lock for a while (as a walk of a
// long list does): a waiter gets it once it is released, not before.
func TestWaitsOutALongHolder(t *testing.T) {
	var mu tinylock.Mutex
	var held atomic.Bool
	mu.Lock()
	held.Store(true)
	got := make(chan bool)
	go func() {
		mu.Lock()
		got <- held.Load()
		mu.Unlock()
	}()
	time.Sleep(20 * time.Millisecond) // past the yields, into the naps
	held.Store(false)
	mu.Unlock()
	require.False(t, <-got, "the waiter took the lock while it was held")
}

func TestUnlockOfUnlockedPanics(t *testing.T) {
	var mu tinylock.Mutex
	require.PanicsWithValue(t, "tinylock: Unlock of an unlocked Mutex", mu.Unlock)
}

func ExampleMutex() {
	var mu tinylock.Mutex
	n := 0
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			n++
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Println(n)
	// Output: 4
}
