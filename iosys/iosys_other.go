//go:build !linux && !darwin && !freebsd && !windows

package iosys

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"

	"github.com/jadevm/jade/evpoll"
)

// ErrUnsupported says that this build has no completion backend wired in.
var ErrUnsupported = fmt.Errorf("iosys: no completion backend wired in on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// Open reports ErrUnsupported.
func Open(worker int) (evpoll.Backend, error) { return nil, ErrUnsupported }

// Listen reports ErrUnsupported.
func Listen(addr string) (int, error) { return -1, ErrUnsupported }

// Socket reports ErrUnsupported.
func Socket(_, addr string) (int, netip.AddrPort, error) { return -1, netip.AddrPort{}, ErrUnsupported }

// AcceptNow reports ErrUnsupported.
func AcceptNow(fd int) (int, error) { return -1, ErrUnsupported }

// SendNow reports ErrUnsupported.
func SendNow(fd int, buf []byte) (int, error) { return 0, ErrUnsupported }

// Accepted reports ErrUnsupported.
func Accepted(fd int) error { return ErrUnsupported }

// Close does nothing: no descriptor is ever created here.
func Close(fd int) {}

// CheckConfig checks the environment that Open reads; this backend reads
// none (JADE_POLLER selects between the Linux backends only).
func CheckConfig() error { return nil }

// ListenWith reports that this build has no sockets.
func ListenWith(_, addr string, reusePort bool) (int, error) { return -1, ErrUnsupported }

// Shutdown reports that this build has no sockets.
func Shutdown(fd, how int) error { return ErrUnsupported }

// LocalAddr reports that this build has no sockets.
func LocalAddr(fd int) (netip.AddrPort, error) { return netip.AddrPort{}, ErrUnsupported }

// PeerAddr reports that this build has no sockets.
func PeerAddr(fd int) (netip.AddrPort, error) { return netip.AddrPort{}, ErrUnsupported }
