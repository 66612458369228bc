//go:build race

package bus_test

// raceEnabled scales the channel hammer down under -race, where every
// operation is about 10× slower.
const raceEnabled = true
