//go:build !race

package vmloop

const raceEnabled = false
