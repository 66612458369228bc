package jasm

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one assembler diagnostic. Line and Col are 1-based; Col counts
// bytes, as go/scanner does. Error() is "file:line:col: message".
type Error struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ErrorList is what Assemble returns when the source has errors: every
// diagnostic in source order (at most maxErrors, then one "too many
// errors" entry). errors.As(err, &e) with e *Error finds the first one.
type ErrorList []*Error

func (l ErrorList) Error() string {
	var sb strings.Builder
	for i, e := range l {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(e.Error())
	}
	return sb.String()
}

// Unwrap gives errors.Is and errors.As access to every entry.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// maxErrors is how many diagnostics one Assemble call reports.
const maxErrors = 10

// pos is a source position.
type pos struct{ line, col int }

// diag collects diagnostics; list sorts them by position and keeps the
// first maxErrors.
type diag struct {
	file string
	errs ErrorList
}

func (d *diag) errorf(p pos, format string, args ...any) {
	if d.full() {
		return
	}
	d.errs = append(d.errs, &Error{d.file, p.line, p.col, fmt.Sprintf(format, args...)})
}

// full reports whether errorf drops further diagnostics, so a caller may
// skip the work of composing one.
func (d *diag) full() bool { return len(d.errs) > 4*maxErrors }

func (d *diag) list() ErrorList {
	if len(d.errs) == 0 {
		return nil
	}
	l := append(ErrorList(nil), d.errs...)
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Line != l[j].Line {
			return l[i].Line < l[j].Line
		}
		return l[i].Col < l[j].Col
	})
	if len(l) > maxErrors {
		more := l[maxErrors]
		l = append(l[:maxErrors:maxErrors], &Error{more.File, more.Line, more.Col, "too many errors"})
	}
	return l
}
