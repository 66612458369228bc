package main

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/jadevm/jade"
)

// startJadeProfiles starts the Jade-level profiles of rt: a CPU profile of
// Jade functions and lines to cpu and a heap profile of Jade heap bytes by
// allocation site to heap (package jprof), each if its file is set. The
// returned function stops them and writes the files; it may be called
// more than once (only the first call writes).
func startJadeProfiles(rt *jade.Runtime, cpu, heap string) (stop func() error, err error) {
	var cf, hf *os.File
	closeAll := func() {
		if cf != nil {
			cf.Close()
		}
		if hf != nil {
			hf.Close()
		}
	}
	if cpu != "" {
		if cf, err = os.Create(cpu); err != nil {
			return nil, fmt.Errorf("jade-cpuprofile: %w", err)
		}
	}
	if heap != "" {
		if hf, err = os.Create(heap); err != nil {
			closeAll()
			return nil, fmt.Errorf("jade-heapprofile: %w", err)
		}
	}
	if cf != nil {
		if err := rt.Observe().StartProfile(cf); err != nil {
			closeAll()
			return nil, fmt.Errorf("jade-cpuprofile: %w", err)
		}
	}
	if hf != nil {
		if err := rt.Observe().StartHeapProfile(hf); err != nil {
			if cf != nil {
				rt.Observe().StopProfile()
			}
			closeAll()
			return nil, fmt.Errorf("jade-heapprofile: %w", err)
		}
	}
	var once sync.Once
	var serr error
	return func() error {
		once.Do(func() {
			if cf != nil {
				// Close and Shutdown have written it already (ErrNoProfile).
				if err := rt.Observe().StopProfile(); err != nil && !errors.Is(err, jade.ErrNoProfile) {
					serr = fmt.Errorf("jade-cpuprofile: %w", err)
				}
				if err := cf.Close(); err != nil && serr == nil {
					serr = fmt.Errorf("jade-cpuprofile: %w", err)
				}
			}
			if hf != nil {
				err := rt.Observe().StopHeapProfile()
				if errors.Is(err, jade.ErrNoProfile) {
					err = nil
				}
				if cerr := hf.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					serr = errors.Join(serr, fmt.Errorf("jade-heapprofile: %w", err))
				}
			}
		})
		return serr
	}, nil
}
