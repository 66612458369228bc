package jprof

import (
	"encoding/binary"

	"github.com/google/pprof/profile"

	"github.com/jadevm/jade/vmloop"
)

// Label keys of the samples.
const (
	LabelEngine   = "jade_engine"    // the engine's name
	LabelTask     = "jade_task"      // the task id
	LabelTaskName = "jade_task_name" // the task's name, where one is set
)

// unknownFile names a program without a file name in its debug
// information.
const unknownFile = "<unknown>.jasm"

// pcBits is how many bits of a location's address hold the pc; the
// function index is above them, and the program's mapping above that.
const (
	pcBits   = 24
	progBits = 48
)

// symbols builds the mappings, functions and locations of a profile: one
// mapping per program (its file), one function per Jade function and one
// location per function@pc, with the pc's source line. A location's
// address is prog<<48 | fn<<24 | pc, inside its program's mapping, so
// `go tool pprof -addresses` tells pcs of one line apart.
type symbols struct {
	p     *profile.Profile
	maps  map[*vmloop.Program]*profile.Mapping
	funcs map[funcKey]*profile.Function
	locs  map[locKey]*profile.Location
	hosts map[string]*profile.Location // host intrinsic frames by name
}

// HostFile is the file name of the frames of host intrinsics (a
// function "intr NAME": the time a host function ran on a worker).
const HostFile = "<host>"

// host returns the location of host intrinsic name: a function "intr
// NAME" of file HostFile, outside every program's mapping.
func (s *symbols) host(name string) *profile.Location {
	if l := s.hosts[name]; l != nil {
		return l
	}
	fn := "intr " + name
	f := &profile.Function{ID: uint64(len(s.p.Function) + 1), Name: fn, SystemName: fn, Filename: HostFile}
	s.p.Function = append(s.p.Function, f)
	l := &profile.Location{ID: uint64(len(s.p.Location) + 1), Line: []profile.Line{{Function: f}}}
	s.p.Location = append(s.p.Location, l)
	if s.hosts == nil {
		s.hosts = map[string]*profile.Location{}
	}
	s.hosts[name] = l
	return l
}

type funcKey struct {
	prog *vmloop.Program
	fn   int32
}

type locKey struct {
	prog   *vmloop.Program
	fn, pc int32
}

func newSymbols(p *profile.Profile) *symbols {
	return &symbols{p: p, maps: map[*vmloop.Program]*profile.Mapping{},
		funcs: map[funcKey]*profile.Function{}, locs: map[locKey]*profile.Location{}}
}

func progFile(prog *vmloop.Program) string {
	if prog.File == "" {
		return unknownFile
	}
	return prog.File
}

// funcFile is the source file of function fn: a function linked in from
// a module keeps its own (Program.FuncFile).
func funcFile(prog *vmloop.Program, fn int32) string {
	if f := prog.FuncFile(int(fn)); f != "" {
		return f
	}
	return unknownFile
}

func (s *symbols) mapping(prog *vmloop.Program) *profile.Mapping {
	if m := s.maps[prog]; m != nil {
		return m
	}
	id := uint64(len(s.p.Mapping) + 1)
	m := &profile.Mapping{ID: id, Start: id << progBits, Limit: (id + 1) << progBits, File: progFile(prog),
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	s.p.Mapping = append(s.p.Mapping, m)
	s.maps[prog] = m
	return m
}

func (s *symbols) function(prog *vmloop.Program, fn int32) *profile.Function {
	k := funcKey{prog, fn}
	if f := s.funcs[k]; f != nil {
		return f
	}
	vf := &prog.Funcs[fn]
	f := &profile.Function{ID: uint64(len(s.p.Function) + 1), Name: vf.Name, SystemName: vf.Name,
		Filename: funcFile(prog, fn), StartLine: int64(vf.Line(0))}
	s.p.Function = append(s.p.Function, f)
	s.funcs[k] = f
	return f
}

func (s *symbols) location(prog *vmloop.Program, fr vmloop.ProfFrame) *profile.Location {
	k := locKey{prog, fr.Fn, fr.PC}
	if l := s.locs[k]; l != nil {
		return l
	}
	m := s.mapping(prog)
	l := &profile.Location{ID: uint64(len(s.p.Location) + 1), Mapping: m,
		Address: m.Start | uint64(fr.Fn)<<pcBits | uint64(fr.PC),
		Line:    []profile.Line{{Function: s.function(prog, fr.Fn), Line: int64(prog.Funcs[fr.Fn].Line(int(fr.PC)))}}}
	s.p.Location = append(s.p.Location, l)
	s.locs[k] = l
	return l
}

// stack returns the locations of a sampled stack (innermost first, as
// pprof wants them).
func (s *symbols) stack(prog *vmloop.Program, st []vmloop.ProfFrame) []*profile.Location {
	locs := make([]*profile.Location, len(st))
	for i, fr := range st {
		locs[i] = s.location(prog, fr)
	}
	return locs
}

// frameString encodes a stack as a string, for a map key.
func frameString(st []vmloop.ProfFrame) string {
	b := make([]byte, 0, 8*len(st))
	for _, fr := range st {
		b = binary.LittleEndian.AppendUint32(b, uint32(fr.Fn))
		b = binary.LittleEndian.AppendUint32(b, uint32(fr.PC))
	}
	return string(b)
}

// frames decodes frameString.
func frames(s string) []vmloop.ProfFrame {
	st := make([]vmloop.ProfFrame, len(s)/8)
	for i := range st {
		st[i].Fn = int32(binary.LittleEndian.Uint32([]byte(s[8*i:])))
		st[i].PC = int32(binary.LittleEndian.Uint32([]byte(s[8*i+4:])))
	}
	return st
}
