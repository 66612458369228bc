//go:build unix

package main

import (
	"os"
	"syscall"
)

// dumpSignals are the signals that make `jade run` print its tasks
// (SIGQUIT keeps Go's own behaviour: a goroutine dump and exit).
var dumpSignals = []os.Signal{syscall.SIGUSR1}

// traceSignals make `jade run` dump its flight recorder to a file.
var traceSignals = []os.Signal{syscall.SIGUSR2}
