package vmloop

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Test helpers of the verifier tests (prefixed vt to stay out of the way of
// the other test files of the package).

func vtFn(name string, params []Type, result Type, nregs int, code ...Instr) Function {
	return Function{Name: name, Params: params, Result: result, NRegs: nregs, Code: code}
}

func vtProg(fns ...Function) *Program {
	return &Program{ABI: ABI, Funcs: fns, KStr: []string{"boom"}}
}

func vtWithHandlers(f Function, hs ...Handler) Function {
	f.Handlers = hs
	return f
}

func vtImports(p *Program, names ...string) *Program {
	for _, n := range names {
		p.Intrinsics = append(p.Intrinsics, Import{Name: n})
	}
	return p
}

var (
	vtI  = []Type{TI64}
	vtII = []Type{TI64, TI64}
	vtF  = []Type{TF64}
	vtR  = []Type{TRef}
)

// vtID is func id(x:i64) -> i64.
func vtID() Function { return vtFn("id", vtI, TI64, 1, Encode(RET, 0, 0, 0, 0)) }

// vtThrower is func thrower() -> void, which throws.
func vtThrower() Function {
	return vtFn("thrower", nil, TVoid, 1,
		Encode(LDS, 0, 0, 0, 0),
		Encode(NEWERR, 0, 0, 0, 0),
		Encode(THROW, 0, 0, 0, 0))
}

// vtResolver resolves host intrinsics from a map.
type vtResolver map[string]*Intrinsic

func (r vtResolver) ResolveIntrinsic(name string) (*Intrinsic, bool) {
	in, ok := r[name]
	return in, ok
}

type vtReject struct {
	name   string
	prog   *Program
	r      Resolver
	where  string // "FUNC@PC", or "" for program-level errors
	reason string // substring of the reason
}

func vtRejects() []vtReject {
	ret0 := Encode(RET, 0, 0, 0, 0)
	retv := Encode(RETV, 0, 0, 0, 0)
	main := func(params []Type, result Type, nregs int, code ...Instr) Function {
		return vtFn("main", params, result, nregs, code...)
	}
	one := func(f Function, more ...Function) *Program { return vtProg(append([]Function{f}, more...)...) }

	return []vtReject{
		// Opcodes and operands.
		{"bad opcode", one(main(nil, TVoid, 0, Instr(250), retv)), nil, "main@0", "undefined opcode 250"},
		{"bad opcode numOps", one(main(nil, TVoid, 0, retv, Instr(NumOps))), nil, "main@1", fmt.Sprintf("undefined opcode %d", NumOps)},
		{"src register out of range", one(main(vtI, TI64, 2, Encode(ADD, 0, 1, 5, 0), ret0)), nil, "main@0", "add: register r5 outside the frame of 2 registers (r0..r1)"},
		{"dst register out of range", one(main(vtI, TI64, 2, Encode(MOVI, 3, 0, 0, 0), ret0)), nil, "main@0", "movi: register r3 outside the frame of 2 registers"},
		{"D1 register out of range", one(main(vtR, TVoid, 3, Encode(BCOPY, 0, 1, 0, EncodeD01(1, 9)), retv)), nil, "main@0", "bcopy: register r9 outside"},
		{"ret register out of range", one(main(vtI, TI64, 1, Encode(RET, 5, 0, 0, 0))), nil, "main@0", "ret: register r5 outside the frame of 1 registers"},
		{"register in frameless function", one(main(nil, TVoid, 0, Encode(LDI, 0, 0, 0, 1), retv)), nil, "main@0", "(the function has no registers)"},
		{"branch target past end", one(main(nil, TVoid, 0, Encode(JMP, 0, 0, 0, 99), retv)), nil, "main@0", "branch target 99 outside function (len 2)"},
		{"branch target negative", one(main(vtI, TVoid, 1, Encode(JZ, 0, 0, 0, -1), retv)), nil, "main@0", "jz: branch target -1 outside function (len 2)"},
		{"bad i64 constant index", one(main(nil, TI64, 1, Encode(LDK, 0, 0, 0, 3), ret0)), nil, "main@0", "ldk: constant index 3 outside the i64 constant pool (0 entries)"},
		{"bad f64 constant index", one(main(nil, TF64, 1, Encode(LDF, 0, 0, 0, 0), ret0)), nil, "main@0", "ldf: constant index 0 outside the f64 constant pool"},
		{"bad string constant index", one(main(nil, TRef, 1, Encode(LDS, 0, 0, 0, 1), ret0)), nil, "main@0", "lds: constant index 1 outside the string constant pool (1 entry)"},
		{"bad bytes constant index", one(main(nil, TRef, 1, Encode(LDB, 0, 0, 0, 0), ret0)), nil, "main@0", "ldb: constant index 0 outside the bytes constant pool (0 entries)"},
		{"ABI 1.3 opcode under .abi 1.2", func() *Program {
			p := one(main(vtR, TI64, 3, Encode(LDI, 1, 0, 0, 0), Encode(BTOI, 2, 0, 1, EncodeD01(1, 1)), Encode(RET, 2, 0, 0, 0)))
			p.ABI = Version{1, 2}
			return p
		}(), nil, "main@1", "btoi needs ABI 1.3 but the program declares .abi 1.2"},
		{"string read as bytes", one(main(nil, TI64, 2, Encode(LDS, 0, 0, 0, 0), Encode(BLEN, 1, 0, 0, 0), Encode(RET, 1, 0, 0, 0))), nil, "main@1", "blen: r0 is read as bytes but holds string on every path; convert it with stob first"},
		{"bytes read as string via movr", one(main(vtI, TI64, 3, Encode(BNEW, 1, 0, 0, 0), Encode(MOVR, 2, 1, 0, 0),
			Encode(STOI, 0, 2, 0, EncodeD01(0, 0)), Encode(RET, 0, 0, 0, 0))), nil, "main@2", "stoi: r2 is read as string but holds bytes on every path; convert it with btos first"},
		{"bad function index", one(main(vtI, TI64, 1, Encode(CALL, 0, 0, 1, 5), ret0), vtID()), nil, "main@0", "call: function index 5 out of range (the program has 2 functions)"},
		{"negative function index", one(main(vtI, TI64, 1, Encode(SPAWN, 0, 0, 1, -2), ret0)), nil, "main@0", "spawn: function index -2 out of range"},
		{"bad import index", one(main(vtI, TVoid, 1, Encode(INTR, 0, 0, 1, 0), retv)), nil, "main@0", "intr: import index 0 out of range (the program imports 0 intrinsics)"},
		{"bad element type void", one(main(vtI, TRef, 2, Encode(ANEW, 1, 0, uint8(TVoid), 0), Encode(RET, 1, 0, 0, 0))), nil, "main@0", "anew: element type void; arrays hold i64, f64 or ref"},
		{"bad element type 7", one(main(vtI, TRef, 2, Encode(ANEW, 1, 0, 7, 0), Encode(RET, 1, 0, 0, 0))), nil, "main@0", "element type type(7)"},

		// Flow typing.
		{"i64 used as ref", one(main(vtI, TI64, 2, Encode(SLEN, 1, 0, 0, 0), Encode(RET, 1, 0, 0, 0))), nil, "main@0", "slen: r0 is read as ref but holds i64"},
		{"f64 used as i64", one(main(vtF, TI64, 2, Encode(ADDI, 1, 0, 0, 1), Encode(RET, 1, 0, 0, 0))), nil, "main@0", "addi: r0 is read as i64 but holds f64"},
		{"f64 used in an integer branch", one(main(vtF, TVoid, 2, Encode(LDI, 1, 0, 0, 0), Encode(JEQ, 1, 0, 0, 3), Encode(NOP, 0, 0, 0, 0), retv)), nil, "main@1", "jeq: r0 is read as i64 but holds f64"},
		{"ref read before write", one(main(nil, TI64, 2, Encode(SLEN, 0, 1, 0, 0), ret0)), nil, "main@0", "slen: r1 is read as ref before it is written"},
		{"ref read before write via merge", one(main(vtI, TI64, 3,
			Encode(JZ, 0, 0, 0, 2),
			Encode(LDS, 1, 0, 0, 0),
			Encode(SLEN, 2, 1, 0, 0),
			Encode(RET, 2, 0, 0, 0))), nil, "main@2", "slen: r1 is read as ref before it is written on some path"},
		{"ref forged after call clobber", one(main(nil, TI64, 4,
			Encode(LDS, 2, 0, 0, 0),
			Encode(LDI, 1, 0, 0, 5),
			Encode(CALL, 1, 0, 1, 1), // id(r1) -> r1; r2 is above the window base
			Encode(SLEN, 0, 2, 0, 0),
			ret0), vtID()), nil, "main@3", "slen: r2 is read as ref but was clobbered by a call"},
		{"void call result read", one(main(nil, TI64, 1,
			Encode(CALL, 0, 0, 0, 1),
			ret0), vtThrower()), nil, "main@1", "ret: r0 is read as i64 but was clobbered by a call"},
		{"type conflict around a loop", one(main(vtI, TI64, 2,
			Encode(LDI, 1, 0, 0, 0),
			Encode(ADDI, 1, 1, 0, 1),
			Encode(ITOF, 1, 0, 0, 0),
			Encode(JNZ, 0, 0, 0, 1),
			ret0)), nil, "main@1", "addi: r1 is read as i64 but holds f64 on some path"},
		{"join reads i64 as task", one(main(vtI, TI64, 2, Encode(JOINI, 1, 0, 0, 0), Encode(RET, 1, 0, 0, 0))), nil, "main@0", "joini: r0 is read as ref but holds i64"},
		{"asetf stores i64", one(main(vtR, TVoid, 2, Encode(LDI, 1, 0, 0, 0), Encode(ASETF, 0, 1, 1, 0), retv)), nil, "main@1", "asetf: r1 is read as f64 but holds i64"},

		// Calls, spawns, intrinsics.
		{"call arity", one(main(vtII, TI64, 2, Encode(CALL, 0, 0, 2, 1), ret0), vtID()), nil, "main@0", "call to id passes 2 arguments, id takes 1"},
		{"spawn arity", one(main(vtI, TRef, 1, Encode(SPAWN, 0, 0, 0, 1), ret0), vtID()), nil, "main@0", "spawn to id passes 0 arguments, id takes 1"},
		{"spawn field B", one(main(vtI, TI64, 1, Encode(SPAWN, 0, 2, 1, 1), ret0), vtID()), nil, "main@0", "spawn of id: field B is 2; it is 0 (the task handle lands in r0) or 1 (detached"},
		{"detached spawn writes no handle", one(main(vtI, TRef, 1, Encode(SPAWN, 0, SpawnDetached, 1, 1), ret0), vtID()), nil, "main@1", "ret: r0 is read as ref but holds i64"},
		{"tailcall arity", one(main(vtII, TI64, 2, Encode(TAILCALL, 0, 0, 2, 1)), vtID()), nil, "main@0", "tailcall to id passes 2 arguments, id takes 1"},
		{"intr arity", vtImports(one(main(vtII, TVoid, 2, Encode(INTR, 0, 0, 2, 0), retv)), "io.print_i64"), nil, "main@0", "intr io.print_i64 passes 2 arguments, io.print_i64 takes 1"},
		{"call argument type", one(main(vtF, TI64, 1, Encode(CALL, 0, 0, 1, 1), ret0), vtID()), nil, "main@0", "call to id, argument 0: r0 is read as i64 but holds f64"},
		{"spawn argument type", one(main(vtR, TRef, 1, Encode(SPAWN, 0, 0, 1, 1), ret0), vtID()), nil, "main@0", "spawn to id, argument 0: r0 is read as i64 but holds ref"},
		{"tailcall argument unassigned", one(main(nil, TI64, 1, Encode(TAILCALL, 0, 0, 1, 1)), vtID()), nil, "main@0", "tailcall to id, argument 0: r0 is read as i64 before it is written"},
		{"intr argument type", vtImports(one(main(vtI, TVoid, 1, Encode(INTR, 0, 0, 1, 0), retv)), "io.print_str"), nil, "main@0", "intr io.print_str, argument 0: r0 is read as ref but holds i64"},
		{"call window exceeds frame", one(main(vtI, TI64, 1, Encode(CALL, 1, 0, 1, 1), ret0), vtID()), nil, "main@0", "call: argument window r1..r1 (1 argument) exceeds the frame of 1 registers"},
		{"intr window exceeds frame", vtImports(one(main(vtI, TVoid, 2, Encode(INTR, 1, 0, 2, 0), retv)), "io.print_i64"), nil, "main@0", "intr: argument window r1..r2 (2 arguments) exceeds the frame of 2 registers"},
		{"call result outside frame", one(main(nil, TI64, 1, Encode(LDI, 0, 0, 0, 0), Encode(CALL, 1, 0, 0, 1), ret0), vtFn("k", nil, TI64, 1, Encode(LDI, 0, 0, 0, 1), ret0)), nil, "main@1", "call to k: result register r1 outside the frame of 1 registers"},
		{"tailcall result mismatch", one(main(vtI, TI64, 1, Encode(TAILCALL, 0, 0, 1, 1)), vtFn("g", vtI, TF64, 1, Encode(ITOF, 0, 0, 0, 0), ret0)), nil, "main@0", "tailcall to g, which returns f64, from main, which returns i64"},
		{"intr of a builtin-only intrinsic", vtImports(one(main(nil, TVoid, 1, Encode(INTR, 0, 0, 0, 0), retv)), "task.spawn"), nil, "main@0", "intr: task.spawn cannot be called through intr; use the spawn instruction"},
		{"unknown intrinsic import", vtImports(one(main(nil, TVoid, 0, retv)), "io.print_i64", "net.frob"), nil, "", `import 1 "net.frob": unknown intrinsic`},
		{"resolver says ok with nil", vtImports(one(main(nil, TVoid, 0, retv)), "host.nil"), vtResolver{"host.nil": nil}, "", `import 0 "host.nil": unknown intrinsic`},
		{"intrinsic newer than the program's abi", vtImports(one(main(nil, TVoid, 0, retv)), "host.new"),
			vtResolver{"host.new": {ID: HostIntrinsicBase, Name: "host.new", Result: TVoid, Since: Version{ABI.Major, ABI.Minor + 1}, IntrOK: true}},
			"", fmt.Sprintf(`import 0 "host.new" needs intrinsic ABI %d.%d but the program declares .abi %s`, ABI.Major, ABI.Minor+1, ABI)},
		{"host intrinsic with void parameter", vtImports(one(main(nil, TVoid, 0, retv)), "host.bad"),
			vtResolver{"host.bad": {ID: HostIntrinsicBase, Name: "host.bad", Params: []Type{TVoid}, IntrOK: true}},
			"", `import 0 "host.bad": parameter 0 has type void`},
		{"program abi other major", func() *Program {
			p := one(main(nil, TVoid, 0, retv))
			p.ABI = Version{ABI.Major + 1, 0}
			return p
		}(), nil, "", "major versions differ"},
		{"program abi newer minor than the VM", func() *Program {
			p := one(main(nil, TVoid, 0, retv))
			p.ABI = Version{ABI.Major, ABI.Minor + 1}
			return p
		}(), nil, "", "abi: program needs intrinsic ABI"},

		// Returns and the end of the code.
		{"ret type mismatch", one(main(vtF, TI64, 1, ret0)), nil, "main@0", "ret: r0 is read as i64 but holds f64"},
		{"retv in non-void function", one(main(nil, TI64, 0, retv)), nil, "main@0", "retv in a function returning i64; return a value with ret"},
		{"ret in void function", one(main(vtI, TVoid, 1, ret0)), nil, "main@0", "ret in a void function; use retv"},
		{"falls off the end", one(main(vtI, TI64, 1, Encode(ADDI, 0, 0, 0, 1))), nil, "main@0", "execution falls off the end of the function after addi"},
		{"falls off after conditional branch", one(main(vtI, TI64, 1, Encode(JZ, 0, 0, 0, 0))), nil, "main@0", "falls off the end of the function after jz"},
		{"falls off after call", one(main(vtI, TI64, 1, Encode(CALL, 0, 0, 1, 1)), vtID()), nil, "main@0", "falls off the end of the function after call"},
		{"empty code", one(main(nil, TVoid, 0)), nil, "main@-1", "function has no code"},

		// Headers.
		{"NRegs above 256", one(main(nil, TVoid, 300, retv)), nil, "main@-1", "frame has 300 registers; it must have 0 to 256"},
		{"NRegs huge", one(main(nil, TVoid, 1<<40, retv)), nil, "main@-1", "frame has 1099511627776 registers"},
		{"NRegs negative", one(main(nil, TVoid, -1, retv)), nil, "main@-1", "frame has -1 registers"},
		{"NRegs below params", one(main(vtII, TVoid, 1, retv)), nil, "main@-1", "frame has 1 registers but 2 parameters"},
		{"void parameter", one(main([]Type{TI64, TVoid}, TVoid, 2, retv)), nil, "main@-1", "parameter 1 has type void; parameters must be i64, f64 or ref"},
		{"bad result type", one(main(nil, Type(9), 0, retv)), nil, "main@-1", "result type type(9) is not void, i64, f64 or ref"},
		{"error in second function", one(main(nil, TVoid, 0, retv), vtFn("g", nil, TVoid, 0, Encode(NOP, 0, 0, 0, 0))), nil, "g@0", "falls off the end"},

		// Program level.
		{"nil program", nil, nil, "", "nil program"},
		{"no functions", &Program{ABI: ABI}, nil, "", "program has no functions"},
		{"duplicate function names", one(main(nil, TVoid, 0, retv), main(nil, TVoid, 0, retv)), nil, "", `functions 0 and 1 are both named "main"; function names must be unique`},
		{"unnamed function", one(main(nil, TVoid, 0, retv), vtFn("", nil, TVoid, 0, retv)), nil, "", "function 1 has no name"},
		{"first repeat in index order", one(vtFn("b", nil, TVoid, 0, retv), vtFn("a", nil, TVoid, 0, retv), vtFn("b", nil, TVoid, 0, retv), vtFn("a", nil, TVoid, 0, retv), vtFn("b", nil, TVoid, 0, retv)), nil, "", `functions 0 and 2 are both named "b"`},
		{"unnamed before a repeat", one(vtFn("a", nil, TVoid, 0, retv), vtFn("", nil, TVoid, 0, retv), vtFn("a", nil, TVoid, 0, retv), vtFn("", nil, TVoid, 0, retv)), nil, "", "function 1 has no name"},
		{"repeat before an unnamed", one(vtFn("a", nil, TVoid, 0, retv), vtFn("a", nil, TVoid, 0, retv), vtFn("", nil, TVoid, 0, retv)), nil, "", `functions 0 and 1 are both named "a"`},

		// Handlers.
		{"handler empty range", one(vtWithHandlers(main(vtR, TVoid, 1, Encode(THROW, 0, 0, 0, 0), retv, retv), Handler{2, 2, 0, 0})), nil, "main@-1", "handler 0 [2,2): empty range"},
		{"handler start after end", one(vtWithHandlers(main(vtR, TVoid, 1, Encode(THROW, 0, 0, 0, 0), retv, retv), Handler{2, 1, 0, 0})), nil, "main@-1", "handler 0 [2,1): empty range"},
		{"handler end past code", one(vtWithHandlers(main(vtR, TVoid, 1, Encode(THROW, 0, 0, 0, 0), retv), Handler{0, 3, 1, 0})), nil, "main@-1", "handler 0 [0,3) ends past the function (len 2)"},
		{"handler target past code", one(vtWithHandlers(main(vtR, TVoid, 1, Encode(THROW, 0, 0, 0, 0), retv), Handler{0, 1, 2, 0})), nil, "main@-1", "handler 0 target 2 outside function (len 2)"},
		{"handler target inside own range", one(vtWithHandlers(main(vtR, TVoid, 1, Encode(NOP, 0, 0, 0, 0), Encode(THROW, 0, 0, 0, 0), retv), Handler{0, 2, 1, 0})), nil, "main@-1", "handler 0 target 1 lies inside its own range [0,2)"},
		{"handler register out of range", one(vtWithHandlers(main(vtR, TVoid, 1, Encode(THROW, 0, 0, 0, 0), retv), Handler{0, 1, 1, 4})), nil, "main@-1", "handler 0 error register r4 outside the frame of 1 registers"},
		{"handlers overlap partially", one(vtWithHandlers(main(vtR, TVoid, 1,
			Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(THROW, 0, 0, 0, 0), retv),
			Handler{0, 3, 5, 0}, Handler{1, 5, 5, 0})), nil, "main@-1", "handlers 0 [0,3) and 1 [1,5) overlap partially"},
		{"outer handler listed before inner", one(vtWithHandlers(main(vtR, TVoid, 1,
			Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(THROW, 0, 0, 0, 0), retv),
			Handler{0, 5, 5, 0}, Handler{1, 3, 5, 0})), nil, "main@-1", "handler 1 [1,3) lies inside handler 0 [0,5) but is listed after it"},
		{"duplicate range listed after its outer", one(vtWithHandlers(main(vtR, TVoid, 1,
			Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(NOP, 0, 0, 0, 0), Encode(THROW, 0, 0, 0, 0), retv),
			Handler{1, 3, 5, 0}, Handler{0, 5, 5, 0}, Handler{1, 3, 5, 0})), nil, "main@-1", "handler 2 [1,3) lies inside handler 1 [0,5) but is listed after it"},
		{"handler register used as ref without an error", one(vtWithHandlers(main(nil, TI64, 2,
			Encode(LDI, 0, 0, 0, 1),
			Encode(JNZ, 0, 0, 0, 4), // reaches the handler without an error in r1
			Encode(LDS, 1, 0, 0, 0),
			Encode(THROW, 1, 0, 0, 0),
			Encode(ERRMSG, 1, 1, 0, 0), // handler
			Encode(SLEN, 0, 1, 0, 0),
			ret0), Handler{2, 4, 4, 1})), nil, "main@4", "errmsg: r1 is read as ref before it is written on some path"},
		{"register written on some paths inside try", one(vtWithHandlers(main(vtI, TI64, 3,
			Encode(JZ, 0, 0, 0, 2),
			Encode(LDI, 1, 0, 0, 7),
			Encode(CALL, 2, 0, 0, 1), // may throw with r1 unassigned on one path
			Encode(RET, 0, 0, 0, 0),
			Encode(RET, 1, 0, 0, 0)), // handler
			Handler{0, 4, 4, 2}), vtThrower()), nil, "main@4", "ret: r1 is read as i64 before it is written on some path"},
		{"call clobbers window at the handler", one(vtWithHandlers(main(nil, TI64, 2,
			Encode(LDI, 1, 0, 0, 5),
			Encode(CALL, 1, 0, 0, 1),
			Encode(LDI, 1, 0, 0, 0),
			Encode(RET, 1, 0, 0, 0),
			Encode(RET, 1, 0, 0, 0)), // handler: r1 was the window base
			Handler{1, 2, 4, 0}), vtThrower()), nil, "main@4", "ret: r1 is read as i64 but was clobbered by a call"},
		{"handler register typed ref", one(vtWithHandlers(main(nil, TI64, 2,
			Encode(LDI, 0, 0, 0, 1),
			Encode(CALL, 1, 0, 0, 1),
			ret0,
			ret0), // handler: r0 holds the error now
			Handler{1, 2, 3, 0}), vtThrower()), nil, "main@3", "ret: r0 is read as i64 but holds ref"},
	}
}

func TestVerifyRejects(t *testing.T) {
	cases := vtRejects()
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			err := Verify(tc.prog, tc.r)
			require.Error(t, err, "Verify accepted the program; want %s: %s", tc.where, tc.reason)
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v is not a *VerifyError", err, err)
			}
			where := ""
			if ve.Func != "" {
				where = fmt.Sprintf("%s@%d", ve.Func, ve.PC)
			}
			if where != tc.where {
				t.Errorf("at %q, want %q (%v)", where, tc.where, err)
			}
			if !strings.Contains(ve.Reason, tc.reason) {
				t.Errorf("reason %q does not contain %q", ve.Reason, tc.reason)
			}
			prefix := "vmloop: verify: "
			if tc.where != "" {
				prefix += tc.where + ": "
			}
			if !strings.HasPrefix(err.Error(), prefix) || err.Error() != prefix+ve.Reason {
				t.Errorf("Error() = %q, want %q + reason", err.Error(), prefix)
			}
			if strings.Contains(ve.Reason, "internal verifier error") {
				t.Errorf("verifier panicked: %v", err)
			}
			if tc.prog != nil {
				if tc.prog.Verified() {
					t.Error("rejected program is marked verified")
				}
				for i, imp := range tc.prog.Intrinsics {
					if imp.Resolved != nil {
						t.Errorf("import %d resolved on a rejected program", i)
					}
				}
				for _, f := range tc.prog.Funcs {
					if f.Blocks != nil {
						t.Errorf("%s: Blocks set on a rejected program", f.Name)
					}
				}
			}
		})
	}
}

// TestVerifyRejectsAfterMutation checks that a verified program that is
// changed and verified again loses its verified mark.
func TestVerifyRejectsAfterMutation(t *testing.T) {
	p := vtProg(vtFn("main", vtI, TI64, 1, Encode(RET, 0, 0, 0, 0)))
	require.NoError(t, Verify(p, nil))
	require.True(t, p.Verified(), "not marked verified")
	p.Funcs[0].Code[0] = Encode(RETV, 0, 0, 0, 0)
	if err := Verify(p, nil); err == nil {
		t.Fatal("mutated program accepted")
	}
	if p.Verified() {
		t.Fatal("mutated program still marked verified")
	}
}
