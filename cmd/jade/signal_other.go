//go:build !unix

package main

import "os"

// dumpSignals is empty where SIGUSR1 does not exist; use --debug-addr.
var dumpSignals []os.Signal

// traceSignals is empty where SIGUSR2 does not exist; use --debug-addr's
// /debug/jade/trace.
var traceSignals []os.Signal
