//go:build !linux

package bus_test

// uringUnavailable is never asked off Linux: forPollers runs the one
// backend of the OS there.
func uringUnavailable() error { return nil }
