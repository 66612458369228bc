package jasm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/jadevm/jade/std"
	"github.com/jadevm/jade/vmloop"
)

// LinkOptions say where Link finds the modules a program imports.
type LinkOptions struct {
	// Path lists library directories, searched in order for an import
	// not found next to the importing file (jade --lib, then $JADE_PATH:
	// see LibPath).
	Path []string
	// NoStd leaves the built-in standard library (package std) out of
	// the search.
	NoStd bool
	// ReadFile reads a source file; nil means os.ReadFile.
	ReadFile func(name string) ([]byte, error)
}

// LibPath returns the library path of the jade command: the directories
// given with --lib, then those of $JADE_PATH (separated by the OS's list
// separator, ':' on Unix).
func LibPath(dirs []string) []string {
	out := append([]string(nil), dirs...)
	for _, d := range filepath.SplitList(os.Getenv("JADE_PATH")) {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// AssembleFile reads the program at path and links it with its imports
// (Link).
func AssembleFile(path string, opt LinkOptions) (*vmloop.Program, error) {
	src, err := opt.read(path)
	if err != nil {
		return nil, fmt.Errorf("jasm: read: %w", err)
	}
	return Link(path, src, opt)
}

// Link assembles the program src (named filename) and every module it
// imports, transitively, into one Program (docs/JASM.md, "Modules"). An
// import resolves relative to the importing file, then in each directory
// of opt.Path, then, for a path starting with "std/", in the built-in
// standard library. The functions of a module are named alias.fn in the
// program (the alias of its first import) and keep their own file in
// Function.File. The result is not verified.
//
// Errors are an ErrorList in file order (the program's file first), each
// with the file, line and column it comes from; a cycle or a duplicate
// names both sites.
func Link(filename string, src []byte, opt LinkOptions) (*vmloop.Program, error) {
	return link(filename, src, opt, false)
}

// link is Link; with stdOnly it reads no file, only the built-in std.
func link(filename string, src []byte, opt LinkOptions, stdOnly bool) (prog *vmloop.Program, err error) {
	l := &linker{opt: opt, stdOnly: stdOnly, byKey: map[string]*srcFile{}, prefixes: map[string]bool{}}
	defer func() {
		// A safety net: a bug in the assembler must not take down a host
		// that assembles untrusted text. The fuzz target fails on it.
		if r := recover(); r != nil {
			prog = nil
			err = ErrorList{&Error{filename, 1, 1, fmt.Sprintf("internal assembler error: %v (please report this input)", r)}}
		}
	}()
	key, kerr := filepath.Abs(filepath.Clean(filename))
	if kerr != nil || filename == "" {
		key = ""
	}
	root := l.parse(filename, key, "", src)
	root.root = true
	if root.d.full() { // parse stopped early: lowering a part of the file would add false errors
		return nil, l.errors()
	}
	l.load(root)
	a := &assembler{files: l.files}
	p := a.program()
	if errs := l.errors(); errs != nil {
		return nil, errs
	}
	return p, nil
}

// srcFile is one source file of a linked program.
type srcFile struct {
	name    string // as errors and debug information show it
	key     string // identity: an absolute path, or "std:" + stdPath
	stdPath string // path in std.Files; "" for a file on disk
	d       *diag
	ast     *fileAST
	root    bool
	prefix  string              // of its functions' names: "" (root) or "alias."
	mods    map[string]*srcFile // its imports by alias
	state   int                 // 0 parsed, 1 loading its imports, 2 loaded
	// via is the import that loaded it (nil for the root), for cycles.
	via *moduleDecl
	by  *srcFile
}

type linker struct {
	opt      LinkOptions
	stdOnly  bool       // Assemble: no file is read, only the built-in std
	files    []*srcFile // load order, root first
	byKey    map[string]*srcFile
	prefixes map[string]bool
}

func (o *LinkOptions) read(name string) ([]byte, error) {
	if o.ReadFile != nil {
		return o.ReadFile(name)
	}
	// Only a regular file: reading a device or a FIFO named by an
	// import (/dev/zero, /dev/stdin) could block or never end.
	if st, err := os.Stat(name); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return os.ReadFile(name)
}

func (l *linker) parse(name, key, stdPath string, src []byte) *srcFile {
	f := &srcFile{name: name, key: key, stdPath: stdPath, d: &diag{file: name}, mods: map[string]*srcFile{}}
	f.ast = parse(src, f.d)
	l.files = append(l.files, f)
	if key != "" {
		l.byKey[key] = f
	}
	return f
}

// load resolves the imports of f, depth first.
func (l *linker) load(f *srcFile) {
	f.state = 1
	for i := range f.ast.modules {
		m := &f.ast.modules[i]
		g, tried, err := l.resolve(f, m.path)
		if err != nil {
			f.d.errorf(m.pathPos, "module %s: %v", quote(m.path), err)
			continue
		}
		if g == nil && len(tried) == 0 {
			f.d.errorf(m.pathPos, "module %s not found: Assemble reads no file, it finds only the built-in std/ modules (use jasm.Link or jasm.AssembleFile)", quote(m.path))
			continue
		}
		if g == nil {
			f.d.errorf(m.pathPos, "module %s not found (looked for %s)", quote(m.path), strings.Join(tried, ", "))
			continue
		}
		f.mods[m.alias] = g
		switch g.state {
		case 1:
			f.d.errorf(m.pos, "import cycle: %s", l.cycle(f, m, g))
		case 0:
			g.via, g.by = m, f
			g.prefix = l.prefix(m.alias, g)
			l.load(g)
		}
	}
	f.state = 2
}

// cycle describes the import chain from g to f and back to g: every site
// as file:line:col.
func (l *linker) cycle(f *srcFile, m *moduleDecl, g *srcFile) string {
	var chain []string
	for h := f; h != g && h.by != nil; h = h.by {
		chain = append(chain, fmt.Sprintf("%s imports %s", posString(h.by.name, h.via.pos), h.name))
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	chain = append(chain, fmt.Sprintf("%s imports %s", posString(f.name, m.pos), g.name))
	return strings.Join(chain, "; ")
}

// prefix picks the name prefix of a module's functions: its alias, else
// (another module has it) its file name without .jasm, else alias#N.
func (l *linker) prefix(alias string, g *srcFile) string {
	cands := []string{alias, strings.TrimSuffix(g.name, ".jasm")}
	for n := 2; ; n++ {
		var c string
		if len(cands) > 0 {
			c, cands = cands[0], cands[1:]
		} else {
			c = fmt.Sprintf("%s#%d", alias, n)
		}
		if !l.prefixes[c] {
			l.prefixes[c] = true
			return c + "."
		}
	}
}

// resolve finds the module p imported by from: next to from, in each
// library directory, in the standard library. It returns nil and the
// places tried when there is none.
func (l *linker) resolve(from *srcFile, p string) (*srcFile, []string, error) {
	var tried []string
	names := []string{p}
	if !strings.HasSuffix(p, ".jasm") {
		names = append(names, p+".jasm")
	}
	if from.stdPath != "" && !filepath.IsAbs(p) {
		for _, n := range names {
			if g := l.std(path.Join(path.Dir(from.stdPath), n)); g != nil {
				return g, nil, nil
			}
		}
		tried = append(tried, "std/"+path.Join(path.Dir(from.stdPath), names[len(names)-1]))
	}
	dirs := []string{filepath.Dir(from.name)}
	if from.stdPath != "" {
		dirs = nil
	}
	if filepath.IsAbs(p) {
		dirs = []string{""}
	} else {
		dirs = append(dirs, l.opt.Path...)
	}
	if l.stdOnly {
		dirs = nil
	}
	for _, dir := range dirs {
		for _, n := range names {
			name := filepath.Clean(filepath.Join(dir, n))
			key, err := filepath.Abs(name)
			if err != nil {
				key = name
			}
			if g := l.byKey[key]; g != nil {
				return g, nil, nil
			}
			src, err := l.opt.read(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			return l.parse(name, key, "", src), nil, nil
		}
		tried = append(tried, filepath.Join(dir, names[len(names)-1]))
	}
	if rest, ok := strings.CutPrefix(p, "std/"); ok && !l.opt.NoStd {
		for _, n := range []string{rest, rest + ".jasm"} {
			if g := l.std(n); g != nil {
				return g, nil, nil
			}
		}
		tried = append(tried, "the standard library")
	}
	return nil, tried, nil
}

// std loads module p of the built-in standard library, or returns nil.
func (l *linker) std(p string) *srcFile {
	if l.opt.NoStd || !strings.HasSuffix(p, ".jasm") || !fs.ValidPath(p) {
		return nil
	}
	key := "std:" + p
	if g := l.byKey[key]; g != nil {
		return g
	}
	src, err := std.Files.ReadFile(p)
	if err != nil {
		return nil
	}
	return l.parse("std/"+p, key, p, src)
}

// errors merges the diagnostics of every file, the program's first, at
// most maxErrors in all.
func (l *linker) errors() ErrorList {
	var all ErrorList
	for _, f := range l.files {
		all = append(all, f.d.list()...)
	}
	if len(all) > maxErrors {
		more := all[maxErrors]
		all = append(all[:maxErrors:maxErrors], &Error{more.File, more.Line, more.Col, "too many errors"})
	}
	return all
}

// posString formats file:line:col.
func posString(file string, p pos) string {
	return fmt.Sprintf("%s:%d:%d", file, p.line, p.col)
}
