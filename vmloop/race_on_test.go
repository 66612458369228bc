//go:build race

package vmloop

// raceEnabled is true under -race, where sync.Pool drops a random share of
// what it is given: pool hits are not checked there.
const raceEnabled = true
