//go:build !linux

package main

import (
	"fmt"
	"os"
)

// main reports that the soak needs Linux: it counts the server's
// descriptors in /proc and runs the io_uring and epoll backends.
func main() {
	fmt.Fprintln(os.Stderr, "jade-soak: Linux only (/proc, io_uring and epoll)")
	os.Exit(2)
}
