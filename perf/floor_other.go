//go:build !linux

package perf

import (
	"errors"
	"time"
)

var errNoFloor = errors.New("perf: floor: Linux only")

func futexPingPong(int) ([]time.Time, []time.Duration, error) { return nil, nil, errNoFloor }

func uringNops(int) ([]time.Time, []time.Duration, error) { return nil, nil, errNoFloor }
