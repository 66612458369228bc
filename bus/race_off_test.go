//go:build !race

package bus_test

const raceEnabled = false
