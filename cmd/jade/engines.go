package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/bus"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/timerwheel"
)

// engineFile is the format of `jade run --engine-config FILE` (JSON; see
// docs/ENGINES.md and examples/engines.json). Unknown fields are errors.
type engineFile struct {
	// Main names the engine that runs the program's main function
	// (default "main", the default engine).
	Main    string       `json:"main"`
	Engines []engineDecl `json:"engines"`
}

type engineDecl struct {
	Name           string      `json:"name"`
	ReductionLimit int64       `json:"reductionLimit"`
	TimerWheel     *wheelDecl  `json:"timerWheel"`
	Limits         limitsDecl  `json:"limits"`
	OverrunPolicy  string      `json:"overrunPolicy"`
	Metrics        metricsDecl `json:"metrics"`
	Capabilities   []string    `json:"capabilities"`
	GoLoop         bool        `json:"goLoop"`
	// LongSlice, LongCall and LongWait are durations ("10ms"; "" is off,
	// or for "main" the --long-slice, --long-call and --long-wait flags).
	LongSlice string `json:"longSlice"`
	LongCall  string `json:"longCall"`
	LongWait  string `json:"longWait"`
}

type wheelDecl struct {
	Levels        int    `json:"levels"`
	SlotsPerLevel int    `json:"slotsPerLevel"`
	Tick          string `json:"tick"`
}

type limitsDecl struct {
	LiveTasks     int64 `json:"liveTasks"`
	PendingTimers int64 `json:"pendingTimers"`
	InFlightIO    int64 `json:"inFlightIO"`
	StackDepth    int   `json:"stackDepth"`
	HeapBytes     int64 `json:"heapBytes"`
	MemoryBytes   int64 `json:"memoryBytes"`
	BlockingCalls int64 `json:"blockingCalls"`
}

type metricsDecl struct {
	Periodic string `json:"periodic"` // perJob (default), engine, off
}

// readEngineFile parses and validates an engine declaration file.
func readEngineFile(path string) (*engineFile, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("engine config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	var f engineFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("engine config: %s: %w (format: docs/ENGINES.md)", path, err)
	}
	seen := map[string]bool{}
	for i, d := range f.Engines {
		if d.Name == "" {
			return nil, fmt.Errorf("engine config: %s: engines[%d] has no name", path, i)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("engine config: %s: engine %q declared twice", path, d.Name)
		}
		seen[d.Name] = true
	}
	if f.Main == "" {
		f.Main = "main"
	}
	if f.Main != "main" && !seen[f.Main] {
		return nil, fmt.Errorf("engine config: %s: main engine %q is not declared", path, f.Main)
	}
	return &f, nil
}

// config converts a declaration into the scheduler's configuration and
// the bus's capabilities.
func (d engineDecl) config() (sched.EngineRuntimeConfig, bus.Capability, error) {
	cfg := sched.EngineRuntimeConfig{
		ReductionLimit: d.ReductionLimit,
		Limits:         sched.ResourceLimits(d.Limits),
		GoLoop:         d.GoLoop,
	}
	if d.TimerWheel != nil {
		w := timerwheel.DefaultConfig()
		if d.TimerWheel.Levels != 0 {
			w.Levels = d.TimerWheel.Levels
		}
		if d.TimerWheel.SlotsPerLevel != 0 {
			w.SlotsPerLevel = d.TimerWheel.SlotsPerLevel
		}
		if d.TimerWheel.Tick != "" {
			tick, err := time.ParseDuration(d.TimerWheel.Tick)
			if err != nil {
				return cfg, 0, fmt.Errorf("engine %q: timerWheel.tick: %w", d.Name, err)
			}
			w.Tick = tick
		}
		cfg.TimerWheel = &w
	}
	for _, f := range []struct {
		name, v string
		d       *time.Duration
	}{{"longSlice", d.LongSlice, &cfg.LongSlice}, {"longCall", d.LongCall, &cfg.LongCall}, {"longWait", d.LongWait, &cfg.LongWait}} {
		if f.v == "" {
			continue
		}
		v, err := time.ParseDuration(f.v)
		if err != nil {
			return cfg, 0, fmt.Errorf("engine %q: %s: %w", d.Name, f.name, err)
		}
		*f.d = v
	}
	switch d.OverrunPolicy {
	case "", "inherit":
	case "drift":
		cfg.OverrunPolicy = timerwheel.Drift
	case "skip":
		cfg.OverrunPolicy = timerwheel.Skip
	case "queue":
		cfg.OverrunPolicy = timerwheel.Queue
	default:
		return cfg, 0, fmt.Errorf("engine %q: overrunPolicy %q: want drift, skip or queue", d.Name, d.OverrunPolicy)
	}
	switch d.Metrics.Periodic {
	case "", "perJob":
	case "engine":
		cfg.Metrics.Periodic = sched.MetricsEngine
	case "off":
		cfg.Metrics.Periodic = sched.MetricsOff
	default:
		return cfg, 0, fmt.Errorf("engine %q: metrics.periodic %q: want perJob, engine or off", d.Name, d.Metrics.Periodic)
	}
	caps := bus.CapSpawn | bus.CapHost | bus.CapIO
	if d.Capabilities != nil {
		caps = 0
		for _, n := range d.Capabilities {
			c, err := bus.ParseCapability(n)
			if err != nil {
				return cfg, 0, fmt.Errorf("engine %q: %w", d.Name, err)
			}
			caps |= c
		}
	}
	return cfg, caps, nil
}

// applyEngines registers the declared engines on rt (an engine named
// "main" reconfigures the default engine) and returns the member that runs
// main.
func applyEngines(rt *jade.Runtime, f *engineFile) (*jade.Engine, error) {
	main := rt.Main()
	for _, d := range f.Engines {
		cfg, caps, err := d.config()
		if err != nil {
			return nil, fmt.Errorf("engine config: %w", err)
		}
		if d.Name == "main" {
			old := rt.Main().Config()
			if cfg.TimerWheel == nil {
				cfg.TimerWheel = old.TimerWheel
			}
			if d.LongSlice == "" {
				cfg.LongSlice = old.LongSlice
			}
			if d.LongCall == "" {
				cfg.LongCall = old.LongCall
			}
			if d.LongWait == "" {
				cfg.LongWait = old.LongWait
			}
			if err := rt.Main().Update(cfg); err != nil {
				return nil, fmt.Errorf("engine config: engine %q: %w", d.Name, err)
			}
			continue
		}
		m, err := rt.RegisterEngine(d.Name, cfg, caps)
		if err != nil {
			return nil, fmt.Errorf("engine config: engine %q: %w", d.Name, err)
		}
		if d.Name == f.Main {
			main = m
		}
	}
	return main, nil
}
