//go:build !race

package sched

const raceEnabledInternal = false
