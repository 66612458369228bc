// Package errs gives the errors of the public API one package prefix.
//
// Every package of this module phrases its errors "pkg: op: cause", and a
// layer that wraps the error of a layer below with %w would stack the
// prefixes: "jade: new: bus: new: sched: new: flight recorder ...". The
// outermost layer instead names the operation once, with [Wrap]: its own
// "pkg: op: " and the cause with the prefixes of the packages below taken
// out ("jade: new: flight recorder ..."), and [Relabel] lets a thin
// layer (the root package over the bus) put its name on an error that
// already names its operation. The wrapped error stays in the chain, so
// sentinels match with errors.Is and error types with errors.As.
package errs

import "strings"

// Packages are the prefixes an error of this module may start with: its
// packages, and the backend names that stand for a package in I/O errors.
var Packages = []string{
	"jade", "bus", "sched", "vmloop", "jasm", "chans", "timerwheel",
	"iosys", "evpoll", "uring", "io_uring", "epoll", "kqueue", "iocp",
	"native", "jprof", "jtrace", "debugsrv", "perf",
}

// Error is one operation's error: "Pkg: Op: cause".
type Error struct {
	Pkg string // the package the caller called
	Op  string // the operation, with its subject ("spawn", `register engine "x"`)
	Err error  // what went wrong (its own prefixes are dropped from the text)
}

// Error is "Pkg: Op: " and the cause without the package prefixes of the
// layers below (and without a repeat of Op right after one).
func (e *Error) Error() string {
	return e.Pkg + ": " + e.Op + ": " + Cause(e.Err.Error(), e.Op)
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns err as an error of operation op of package pkg; nil stays
// nil.
func Wrap(pkg, op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Pkg: pkg, Op: op, Err: err}
}

// Relabel returns err as an error of package pkg: its text is err's with
// the leading package prefix replaced by pkg, or, when err's text starts
// with none, prefixed with "pkg: op: ". The root package uses it on the
// errors of the bus, which has named the operation already; nil stays
// nil.
func Relabel(pkg, op string, err error) error {
	if err == nil {
		return nil
	}
	return &relabeled{pkg: pkg, op: op, err: err}
}

// relabeled is [Relabel]'s error.
type relabeled struct {
	pkg, op string
	err     error
}

func (e *relabeled) Error() string {
	msg := e.err.Error()
	if head, _, ok := strings.Cut(msg, ": "); ok && isPackage(head) {
		return e.pkg + ": " + Cause(msg, "")
	}
	return e.pkg + ": " + e.op + ": " + Cause(msg, e.op)
}

func (e *relabeled) Unwrap() error { return e.err }

// Cause returns msg without the prefixes that name a package: those at its
// start, together with an op equal to op right after them (op "" matches
// none), and those after any ": " within it.
func Cause(msg, op string) string {
	for {
		head, rest, ok := strings.Cut(msg, ": ")
		if !ok || !(isPackage(head) || (op != "" && head == op)) {
			break
		}
		msg = rest
	}
	if !strings.Contains(msg, ": ") {
		return msg
	}
	var b strings.Builder
	parts := strings.Split(msg, ": ")
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if isPackage(p) {
			continue // "…: sched: …" → "…: …"; a lone word "sched" ends no segment
		}
		b.WriteString(": ")
		b.WriteString(p)
	}
	return b.String()
}

// isPackage reports whether s is one of [Packages].
func isPackage(s string) bool {
	for _, p := range Packages {
		if s == p {
			return true
		}
	}
	return false
}
