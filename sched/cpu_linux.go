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

// tightTimers sets the calling thread's timer slack to 1 ns and returns
// what puts the thread's own slack back: a worker parks with a timeout
// until its earliest timer deadline, and the default slack (50 µs) would
// make every sleep that much late. The worker restores the slack before
// it unlocks the thread, so a thread Go reuses after the runtime closes
// is as it was: a process the host starts from it would otherwise
// inherit the 1 ns slack, and every timed wait of its threads (Go's
// sysmon's 20 µs sleeps among them) would wake that much more often
// (TestWorkerRestoresTimerSlack).
func tightTimers() (restore func()) {
	old, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0)
	if errno != 0 || unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) != nil {
		return func() {}
	}
	return func() { unix.Prctl(unix.PR_SET_TIMERSLACK, old, 0, 0, 0) }
}
