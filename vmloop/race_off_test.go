//go:build !race

package vmloop

const raceEnabled = false

// longN is the size of the long steps' operands (longsteps_test.go):
// 32 MiB.
const longN = 32 << 20
