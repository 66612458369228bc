//go:build race

package vmloop

// raceEnabled is true under -race, where sync.Pool drops a random share of
// what it is given: pool hits are not checked there.
const raceEnabled = true

// longN is the size of the long steps' operands (longsteps_test.go):
// 4 MiB under -race (64 chunks still: these tests run one goroutine,
// so the detector has nothing to find in them and only multiplies their
// time; `make unit` runs them at 32 MiB).
const longN = 4 << 20
