package bus

import (
	"github.com/jadevm/jade/internal/chans"
	"github.com/jadevm/jade/sched"
)

// extName describes a host object behind an ext handle as the Jade value
// a program knows it as ("a listener", "a periodic job"). Texts that a
// program can read (trap and error messages reach other tasks through
// errmsg) use it instead of the Go value, whose rendering shows host
// addresses and type names.
func extName(obj any) string {
	switch o := obj.(type) {
	case *ioHandle:
		return "a " + o.kind
	case *sched.Job:
		return "a periodic job"
	case *chans.Chan:
		return "a channel"
	}
	return "a host object"
}
