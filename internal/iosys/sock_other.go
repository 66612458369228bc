//go:build !linux && !darwin && !freebsd && !windows

package iosys

import "net/netip"

// newSocket reports ErrUnsupported.
func newSocket(ap netip.AddrPort) (int, error) { return -1, ErrUnsupported }

// AcceptNow reports ErrUnsupported.
func AcceptNow(fd int) (int, error) { return -1, ErrUnsupported }

// SendNow reports ErrUnsupported.
func SendNow(fd int, buf []byte) (int, error) { return 0, ErrUnsupported }

// Accepted reports ErrUnsupported.
func Accepted(fd int) error { return ErrUnsupported }

// Close does nothing: no descriptor is ever created here.
func Close(fd int) {}

// listen reports ErrUnsupported.
func listen(ap netip.AddrPort, reusePort bool) (int, error) { return -1, ErrUnsupported }

// Shutdown reports that this build has no sockets.
func Shutdown(fd, how int) error { return ErrUnsupported }

// LocalAddr reports that this build has no sockets.
func LocalAddr(fd int) (netip.AddrPort, error) { return netip.AddrPort{}, ErrUnsupported }

// PeerAddr reports that this build has no sockets.
func PeerAddr(fd int) (netip.AddrPort, error) { return netip.AddrPort{}, ErrUnsupported }
