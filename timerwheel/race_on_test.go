//go:build race

package timerwheel

// raceEnabled is true under -race: single-goroutine model runs are cut down
// there (they gain nothing from the detector), memory figures skipped.
const raceEnabled = true
