//go:build race

package vmloop

// raceEnabled is true under -race, where sync.Pool drops a random share of
// what it is given: pool hits are not checked there.
const raceEnabled = true

// raceShift is 1 under -race, else 0: the single-goroutine stress tests
// scale their sizes down by it (longN).
const raceShift = 1
