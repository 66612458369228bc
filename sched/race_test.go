//go:build race

package sched_test

// raceEnabled scales the hammer tests down where the race detector makes
// every operation ~10× slower (CI still runs a 100k-task hammer under it).
const raceEnabled = true
