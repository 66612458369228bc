package vmloop

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// Kind is the kind of a JadeValue and of a heap object.
type Kind uint8

// Value and object kinds. KindVoid is the value of a void function.
const (
	KindVoid Kind = iota
	KindI64
	KindF64
	KindString
	KindBytes
	KindArrayI64
	KindArrayF64
	KindArrayRef
	KindError
	KindTask
	KindEvent
	KindExt // an opaque host object (host intrinsics); never dereferenced by the VM
	KindMap // a hash table of keys and values (map.go)
	kindCount
)

var kindNames = [...]string{
	KindVoid: "void", KindI64: "i64", KindF64: "f64", KindString: "string",
	KindBytes: "bytes", KindArrayI64: "array<i64>", KindArrayF64: "array<f64>",
	KindArrayRef: "array<ref>", KindError: "error", KindTask: "task",
	KindEvent: "event", KindExt: "ext", KindMap: "map",
}

func (k Kind) String() string {
	if k < kindCount {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Type returns the register type that holds a value of kind k.
func (k Kind) Type() Type {
	switch k {
	case KindVoid:
		return TVoid
	case KindI64:
		return TI64
	case KindF64:
		return TF64
	default:
		return TRef
	}
}

// Value is a JadeValue: the transport format at every boundary of the VM —
// spawn arguments, join results, intrinsic arguments and results, thrown
// errors and the Go host API (spec §5.3). A Value never aliases a task's
// heap: converting into or out of a heap copies mutable data (bytes,
// arrays) and shares immutable data (strings). The zero Value is void.
type Value struct {
	kind Kind
	bits uint64  // i64 or f64 bits
	str  string  // string contents; error message
	aux  string  // error kind
	b    []byte  // bytes contents; the elements of an i64 or f64 array, packed (nums)
	arr  []Value // ref array elements
	ext  any     // task, event or host object
}

// Void is the value of a function without a result.
func Void() Value { return Value{} }

// I64 makes an integer value.
func I64(v int64) Value { return Value{kind: KindI64, bits: uint64(v)} }

// F64 makes a float value.
func F64(v float64) Value { return Value{kind: KindF64, bits: math.Float64bits(v)} }

// Str makes an immutable string value.
func Str(s string) Value { return Value{kind: KindString, str: s} }

// Bytes makes a byte-buffer value holding a copy of b.
func Bytes(b []byte) Value {
	return Value{kind: KindBytes, b: append([]byte(nil), b...)}
}

// Array makes an array value of the given element kind (KindI64, KindF64,
// or any reference kind for an array of refs). Elements must match: i64
// and f64 arrays hold only their kind; ref arrays hold reference kinds or
// void (the null handle).
func Array(elem Kind, elems ...Value) (Value, error) {
	k := KindArrayRef
	switch elem {
	case KindI64:
		k = KindArrayI64
	case KindF64:
		k = KindArrayF64
	}
	for i, e := range elems {
		if !arrayAccepts(k, e.kind) {
			return Value{}, fmt.Errorf("vmloop: array: element %d is %s, want %s element", i, e.kind, k)
		}
	}
	if k != KindArrayRef {
		nums, b := packed(len(elems))
		for i, e := range elems {
			nums[i] = e.bits
		}
		return Value{kind: k, b: b}, nil
	}
	return Value{kind: k, arr: append([]Value(nil), elems...)}, nil
}

// packed makes the element store of an i64 or f64 array of n elements:
// the elements as words, and the same memory as the bytes a Value keeps
// (8 bytes a word, the same as the heap accounts, where a Value per
// element would take 112). It is a []uint64 allocation, so nums' view of
// it is aligned.
func packed(n int) (nums []uint64, b []byte) {
	if n == 0 {
		return nil, nil
	}
	nums = make([]uint64, n)
	return nums, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(nums))), 8*n)
}

// nums returns the elements of an i64 or f64 array value (aliasing them;
// see packed: only packed makes the bytes of such a value).
func (v *Value) nums() []uint64 {
	if len(v.b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(v.b))), len(v.b)/8)
}

// elemKind is the kind of the elements of an i64 or f64 array kind.
func elemKind(k Kind) Kind {
	if k == KindArrayF64 {
		return KindF64
	}
	return KindI64
}

// StrArray makes an array of strings (the shape of main's arguments).
func StrArray(ss []string) Value {
	a := make([]Value, len(ss))
	for i, s := range ss {
		a[i] = Str(s)
	}
	return Value{kind: KindArrayRef, arr: a}
}

func arrayAccepts(arr, elem Kind) bool {
	switch arr {
	case KindArrayI64:
		return elem == KindI64
	case KindArrayF64:
		return elem == KindF64
	default:
		return elem == KindVoid || elem.Type() == TRef
	}
}

// Error kinds raised by the runtime. Programs raise KindError values with
// kind ErrKindError through newerr.
const (
	ErrKindError      = "Error"           // raised by newerr/throw in bytecode
	ErrKindTask       = "TaskError"       // join of a task that trapped or was cancelled
	ErrKindResource   = "ResourceError"   // an engine limit was exhausted
	ErrKindHost       = "HostError"       // raised by a host intrinsic
	ErrKindCapability = "CapabilityError" // the engine lacks a capability
	ErrKindTimeout    = "TimeoutError"    // a wait outlived its time.timeout
	ErrKindIO         = "IoError"         // a socket or file operation failed (names the op and errno)
	ErrKindClosed     = "ClosedError"     // a send on a closed channel, a recv from a closed and drained one, a second close
	ErrKindShutdown   = "ShutdownError"   // a listen or accept refused because the runtime is draining
)

// Err makes an error value with a kind (e.g. "Error", "ResourceError") and
// a message.
func Err(kind, msg string) Value { return Value{kind: KindError, aux: kind, str: msg} }

// Ext wraps a runtime object (task, event, host object) as a value. Only
// the runtime creates task and event values.
func Ext(kind Kind, obj any) Value { return Value{kind: kind, ext: obj} }

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.kind }

// Int returns the integer of an i64 value (0 for other kinds).
func (v Value) Int() int64 {
	if v.kind != KindI64 {
		return 0
	}
	return int64(v.bits)
}

// Float returns the float of an f64 value (0 for other kinds).
func (v Value) Float() float64 {
	if v.kind != KindF64 {
		return 0
	}
	return math.Float64frombits(v.bits)
}

// String returns the contents of a string, the message of an error, or a
// readable rendering of any other value.
func (v Value) String() string {
	switch v.kind {
	case KindVoid:
		return "void"
	case KindI64:
		return strconv.FormatInt(int64(v.bits), 10)
	case KindF64:
		return strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64)
	case KindString:
		return v.str
	case KindBytes:
		return fmt.Sprintf("bytes%q", v.b)
	case KindError:
		return v.aux + ": " + v.str
	case KindArrayI64, KindArrayF64, KindArrayRef:
		return v.arrayString()
	case KindMap:
		return v.mapString()
	default:
		return "<" + v.kind.String() + ">"
	}
}

// Message returns an error value's message.
func (v Value) Message() string { return v.str }

// ErrKind returns an error value's kind ("Error", "ResourceError", ...).
func (v Value) ErrKind() string { return v.aux }

// BytesData returns a copy of a bytes value's contents.
func (v Value) BytesData() []byte { return append([]byte(nil), v.b...) }

// Elems returns a copy of an array value's elements, or of a map value's
// keys and values as pairs (key, value) in its iteration order.
func (v Value) Elems() []Value {
	if v.kind == KindArrayI64 || v.kind == KindArrayF64 {
		nums := v.nums()
		out := make([]Value, len(nums))
		ek := elemKind(v.kind)
		for i, bits := range nums {
			out[i] = Value{kind: ek, bits: bits}
		}
		return out
	}
	return append([]Value(nil), v.arr...)
}

// Len returns the length of a string, bytes or array value.
func (v Value) Len() int {
	switch v.kind {
	case KindString:
		return len(v.str)
	case KindBytes:
		return len(v.b)
	case KindArrayI64, KindArrayF64:
		return len(v.b) / 8
	default:
		return len(v.arr)
	}
}

// Obj returns the runtime object of a task, event or ext value.
func (v Value) Obj() any { return v.ext }

// Equal reports whether two values have the same kind and contents
// (runtime objects compare by identity).
func (v Value) Equal(w Value) bool {
	st := [][2]*Value{{&v, &w}}
	for len(st) > 0 {
		p := st[len(st)-1]
		st = st[:len(st)-1]
		a, b := p[0], p[1]
		if a.kind != b.kind || a.bits != b.bits || a.str != b.str || a.aux != b.aux ||
			string(a.b) != string(b.b) || len(a.arr) != len(b.arr) || a.ext != b.ext {
			return false
		}
		for i := range a.arr {
			st = append(st, [2]*Value{&a.arr[i], &b.arr[i]})
		}
	}
	return true
}

// valueBytes is the host memory of one Value (an array<ref> element).
const valueBytes = int64(unsafe.Sizeof(Value{}))

// HostBytes returns the host memory the value takes: every Value, array
// element and payload (a string is counted although it may be shared).
// An engine's memory limit counts it for each copy out of a task heap
// that outlives the copy (a task's outcome kept for its joiners); it is
// up to 14 times Size for an array<ref>, whose elements are Values.
func (v Value) HostBytes() int64 {
	n := valueBytes
	st := []*Value{&v}
	for len(st) > 0 {
		x := st[len(st)-1]
		st = st[:len(st)-1]
		n += int64(len(x.str) + len(x.aux) + cap(x.b))
		if len(x.arr) > 0 {
			n += valueBytes * int64(cap(x.arr))
			for i := range x.arr {
				if x.arr[i].kind.Type() == TRef {
					st = append(st, &x.arr[i])
				}
			}
		}
	}
	return n
}

// Size returns the number of heap bytes the value accounts for when it is
// imported into a task heap (used by the per-task heap limit). A task
// accounts for none: a heap names it by a task reference, not an object
// (taskref.go).
func (v Value) Size() int {
	n := 0
	st := []*Value{&v}
	for len(st) > 0 {
		x := st[len(st)-1]
		st = st[:len(st)-1]
		n += 32
		switch x.kind {
		case KindTask:
			n -= 32
		case KindString, KindError:
			n += len(x.str) + len(x.aux)
		case KindBytes, KindArrayI64, KindArrayF64: // packed: 8 bytes an element
			n += len(x.b)
		case KindMap:
			n += int(mapEntryBytes)*len(x.arr)/2 + 2*mapSlotBytes*len(x.arr)/2
			for i := 0; i < len(x.arr); i += 2 {
				if k := &x.arr[i]; k.kind != KindI64 {
					n += int(mapKeyBytes) + len(k.str) + len(k.b)
				}
			}
			for i := 1; i < len(x.arr); i += 2 {
				if x.arr[i].kind.Type() == TRef {
					st = append(st, &x.arr[i])
				}
			}
		case KindArrayRef:
			n += 8 * len(x.arr)
			for i := range x.arr {
				if x.arr[i].kind.Type() == TRef {
					st = append(st, &x.arr[i])
				}
			}
		}
	}
	return n
}
