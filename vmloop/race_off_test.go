//go:build !race

package vmloop

const raceEnabled = false

// raceShift is 1 under -race, else 0: the single-goroutine stress tests
// scale their sizes down by it (longN).
const raceShift = 0
