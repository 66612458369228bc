//go:build !linux

package testkit

// uringUnavailable is never asked off Linux: Pollers runs the one backend
// there.
func uringUnavailable() error { return nil }
