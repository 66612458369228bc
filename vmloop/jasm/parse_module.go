package jasm

import "strings"

// moduleDecl is one `.import "path" as name`: the functions of the module
// at path are called as name.fn in the importing file.
type moduleDecl struct {
	path    string
	alias   string
	pos     pos // of the directive
	pathPos pos
}

// moduleImport parses `.import "path" as name` and reports whether rest
// has that shape (a quoted path then `as`); anything else is an intrinsic
// import. A quoted path that only a module could have (a "/" or a .jasm
// suffix) without `as` is an error rather than an intrinsic name.
func (p *parser) moduleImport(at pos, rest []token) bool {
	if len(rest) == 0 || rest[0].kind != tString {
		return false
	}
	path := rest[0].sval
	if len(rest) < 2 || rest[1].kind != tIdent || rest[1].text != "as" {
		if len(rest) == 1 && (strings.Contains(path, "/") || strings.HasSuffix(path, ".jasm")) {
			p.errorf(p.at(rest[0]), "module import needs a name: .import %s as name", rest[0].text)
			return true
		}
		return false
	}
	if len(rest) != 3 || rest[2].kind != tIdent {
		p.errorf(at, `.import of a module takes a path and a name: .import "std/bytes" as bytes`)
		return true
	}
	alias := rest[2].text
	if msg := checkName(alias, "module name"); msg != "" {
		p.errorf(p.at(rest[2]), "%s", msg)
		return true
	}
	if path == "" {
		p.errorf(p.at(rest[0]), "empty module path")
		return true
	}
	for _, m := range p.file.modules {
		if m.alias == alias {
			p.errorf(p.at(rest[2]), "duplicate module name %s (first imported at %s)", alias, posString(p.d.file, m.pos))
			return true
		}
	}
	p.file.modules = append(p.file.modules, moduleDecl{path: path, alias: alias, pos: at, pathPos: p.at(rest[0])})
	return true
}

// funcName returns the program's name for a function operand of the file
// being assembled: alias.fn names function fn of the module imported as
// alias; any other name (quoted or not) is a function of this file.
func (a *assembler) funcName(o *operand) (string, bool) {
	if o.kind == oString {
		return a.cur.prefix + o.sval, true
	}
	alias, fn, ok := strings.Cut(o.text, ".")
	if !ok {
		return a.cur.prefix + o.text, true
	}
	m := a.cur.mods[alias]
	if m == nil {
		a.errorf(o.pos, "unknown module %s in %s (import it with .import \"path\" as %s)", alias, o.text, alias)
		return "", false
	}
	return m.prefix + fn, true
}
