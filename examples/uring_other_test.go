//go:build !linux

package examples_test

// uringUnavailable is never asked off Linux: forBackends runs the one
// backend of the OS there.
func uringUnavailable() error { return nil }
