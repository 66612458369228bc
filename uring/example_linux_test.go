//go:build linux

package uring_test

import (
	"fmt"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/uring"
)

// Open a backend, submit an op with a token, and collect its completion.
// The scheduler does the same with real socket and file ops, turning each
// completion's token into a wake-up.
func ExampleOpen() {
	b, err := uring.Open(uring.Options{Poller: "epoll"}) // "" honours JADE_POLLER, then io_uring
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	if _, err := b.Submit(&evpoll.Op{Kind: evpoll.Nop}, 42); err != nil {
		fmt.Println(err)
		return
	}
	var out [8]evpoll.Completion
	n, err := b.Wait(time.Second, out[:])
	fmt.Println(b.Name(), n, err, out[0].Token, out[0].Res)
	// Output: epoll 1 <nil> 42 0
}
