//go:build !linux

package sched

import "errors"

// pinSupported reports whether Config.PinCPUs has an effect here: outside
// Linux pinning is a documented no-op.
const pinSupported = false

func newParker() parker { return parker{ch: make(chan struct{}, 1)} }

func allowedCPUs() []int { return nil }

func pinThread(cpu int) error { return errors.New("sched: CPU pinning is only supported on Linux") }

// threadID is 0 where thread ids are not read.
func threadID() int { return 0 }

// tightTimers does nothing outside Linux.
func tightTimers() (restore func()) { return func() {} }
