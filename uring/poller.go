package uring

import (
	"errors"
	"fmt"
	"os"
)

// ErrUnknownPoller is wrapped by the error for a poller name that is not
// "uring", "io_uring", "epoll", "auto" or empty, from Options.Poller or the
// JADE_POLLER environment variable.
var ErrUnknownPoller = errors.New("unknown poller")

// PollerSetting returns the poller Open would use for o and where the
// setting came from: o.Poller ("Options.Poller"), else the JADE_POLLER
// environment variable ("JADE_POLLER"); an empty mode means "auto".
func PollerSetting(o Options) (mode, src string) {
	if o.Poller != "" {
		return o.Poller, "Options.Poller"
	}
	return os.Getenv("JADE_POLLER"), "JADE_POLLER"
}

// CheckPoller checks the poller setting of o (PollerSetting) without
// opening anything, so that a host can reject a misspelt JADE_POLLER before
// it starts workers that would each fail to open their backend. The error
// names the variable and wraps ErrUnknownPoller.
func CheckPoller(o Options) error {
	mode, src := PollerSetting(o)
	switch mode {
	case "", "auto", "uring", "io_uring", "epoll":
		return nil
	}
	return fmt.Errorf("uring: %s=%q: %w; set it to uring, epoll or auto, or leave it unset", src, mode, ErrUnknownPoller)
}
