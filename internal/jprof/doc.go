// Package jprof writes profiles of Jade programs in pprof's format: a CPU
// profile of the Jade functions and .jasm lines the workers run, and a
// heap profile of Jade heap bytes by allocation site. Read them with
// `go tool pprof` like any Go profile; frames are Jade functions, with the
// program's file name and each instruction's line from its debug
// information (Program.File, Function.Lines).
//
// # CPU profile
//
// Time-based samples taken at safe points (sched/profile.go has the
// details): every Period (10 ms) a goroutine asks each busy worker for a
// sample through the Exec's stop flag, the one a cancel or a kick uses;
// the running loop, the Go loop or the cgo loop of package native, stops
// at its next safe point with its frames written back, the worker records
// the task's Jade stack and carries on with the slice. The chance of a
// sample is each task's share of the workers' time, not of their
// reductions (the two loops and bulk instructions run at different speeds
// per reduction); the sample lands at the next safe point after the tick
// (every loop iteration, call and return is one), so a line is off by at
// most the straight-line code before that point.
//
// Each sample is worth Period of CPU time and carries the labels
// jade_engine (the engine's name), jade_task (the task id) and, where one
// is set, jade_task_name, so `-tagfocus jade_task=42` or `-tags` split a
// profile by task. Time a worker spends outside a task (looking for work,
// polling I/O, parked) is not sampled: the profile is of Jade code; the Go
// profile (`jade run --cpuprofile`) shows the runtime itself. The ticking
// goroutine exists only while a profile runs: an idle runtime without a
// profile still makes no wake-ups (S-4).
//
// # Heap profile
//
// While a heap profile runs, every task heap samples its allocations, one
// in about Rate accounted bytes (512 KiB by default, as Go's
// MemProfileRate), at exponentially distributed intervals (vmloop
// StartHeapSampling). A sample records the allocating instruction's Jade
// stack and is scaled to an estimate of the bytes and objects it stands
// for; when the object is freed (FREE, or its task's end) the sample's
// share moves from in use to freed. The profile has pprof's four heap
// sample types: alloc_objects, alloc_space, inuse_objects and inuse_space
// (the default), labelled by jade_engine.
//
// # Cost when off
//
// Nothing runs in the VM loops. The workers load one field of their own
// where a slice ends (a sample request), and a heap allocation loads one
// flag (vmloop's heapSampling) on its slow path. A CPU profile adds one
// safe-point stop per worker and Period; a heap profile one atomic add per
// allocation on one of 64 shared countdowns (by task), and a map entry
// per sampled live object.
package jprof
