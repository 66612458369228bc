//go:build linux

package sched

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// pinSupported reports whether Config.PinCPUs has an effect here.
const pinSupported = true

func newParker() parker { return parker{} }

// allowedCPUs returns the CPUs of this process's affinity mask, in order
// (nil when it cannot be read).
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*8*int(unsafe.Sizeof(set[0])); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// pinThread binds the calling OS thread (locked by the worker) to cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// threadID returns the calling thread's id.
func threadID() int { return unix.Gettid() }

// tightTimers sets the calling thread's timer slack to 1 ns: a worker
// parks with a timeout until its earliest timer deadline, and the default
// slack (50 µs) would make every sleep that much late. The thread is
// locked to the worker; a thread later returned to Go keeps the smaller
// slack, which only makes its timed waits more exact.
func tightTimers() { unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }
