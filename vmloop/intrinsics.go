package vmloop

import (
	"fmt"
	"strings"
)

// Version is an intrinsic ABI version, major.minor. A program states the
// version it needs with `.abi M.m`; it loads when M equals the VM's major
// and m is at most the VM's minor (spec S-19: the table below is the one
// central place where intrinsic names, IDs and signatures are fixed).
type Version struct{ Major, Minor uint16 }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Before reports whether v is an older version than w.
func (v Version) Before(w Version) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// ABI is the intrinsic ABI this VM implements. Adding an intrinsic, or an
// opcode a program must declare (opSince: 1.3 added the bounded byte and
// string opcodes of isa_bytes.go; 1.9 a SPAWN's field B, SpawnDetached),
// bumps the minor version; changing or removing one bumps the major.
var ABI = Version{1, 9}

// SpawnDetachedABI is the ABI that gave a SPAWN's field B a meaning
// (SpawnDetached): a VM before it would make a handle in the window base.
// Under an older .abi, jasm's `spawn _` makes a handle in a register the
// program cannot name, as it did before.
var SpawnDetachedABI = Version{1, 9}

// CheckABI reports whether a program needing version need can run here.
func CheckABI(need Version) error {
	if need.Major != ABI.Major {
		return fmt.Errorf("vmloop: abi: program needs intrinsic ABI %s but this VM implements %s (major versions differ); rebuild the program for ABI %d.x", need, ABI, ABI.Major)
	}
	if need.Minor > ABI.Minor {
		return fmt.Errorf("vmloop: abi: program needs intrinsic ABI %s but this VM implements only %s; upgrade the VM or lower the program's .abi", need, ABI)
	}
	return nil
}

// IntrinsicID identifies an intrinsic. IDs below HostIntrinsicBase come from
// the central table and never change within a major version; IDs from
// HostIntrinsicBase up are handed out to host intrinsics at registration.
type IntrinsicID uint16

// HostIntrinsicBase is the first ID given to host (FFI) intrinsics.
const HostIntrinsicBase IntrinsicID = 0x8000

// Intrinsic describes one entry of the central intrinsic table or one host
// intrinsic.
type Intrinsic struct {
	ID     IntrinsicID
	Name   string // family.name
	Params []Type
	Result Type
	Since  Version // ABI version that introduced it
	// Builtin is the dedicated opcode lowering (spec §5.2 lowering 1), or
	// NOP when the intrinsic is reachable only through INTR.
	Builtin Op
	// IntrOK says whether the generic INTR opcode may name it (lowering 2).
	// Builtins whose operands cannot be typed statically through a window
	// (task.spawn takes a function, the typed joins a destination) are
	// builtin-only.
	IntrOK bool
}

// Central intrinsic IDs (ABI 1.0). Append only.
const (
	IntrSpawn IntrinsicID = iota + 1
	IntrJoinI64
	IntrJoinF64
	IntrJoinRef
	IntrJoinVoid
	IntrOutcome
	IntrYield
	IntrCancel
	IntrCancelled
	IntrEventNew
	IntrEventWait
	IntrEventSignal
	IntrEventBroadcast
	IntrPrintI64
	IntrPrintF64
	IntrPrintStr
	IntrTaskID

	// ABI 1.1: time (monotonic clock, sleeps, wait timeouts, periodic jobs).
	IntrTimeNow
	IntrTimeSleep
	IntrTimeSleepUntil
	IntrTimeTimeout
	IntrTimePeriodic
	IntrTimeTick
	IntrTimeJobMetric
	IntrTimeJobStats

	// ABI 1.2: sockets and files; each suspends the calling task until the
	// completion backend reports the operation done.
	IntrNetListen
	IntrNetAccept
	IntrNetConnect
	IntrNetRead
	IntrNetWrite
	IntrNetClose
	IntrFileOpen
	IntrFileRead
	IntrFileWrite
	IntrFileClose

	// ABI 1.3, server I/O: reads bounded by a length, half-close, socket
	// addresses, listeners sharing a port.
	IntrNetReadN
	IntrNetShutdown
	IntrNetLocalAddr
	IntrNetPeerAddr
	IntrNetListenOpts
	IntrFileReadN

	// ABI 1.4, observability: task names.
	IntrTaskSetName

	// ABI 1.5, channels: bounded queues of one element type between
	// tasks (docs/MESSAGING.md).
	IntrChanNewI64
	IntrChanNewF64
	IntrChanNewRef
	IntrChanSendI64
	IntrChanSendF64
	IntrChanSendRef
	IntrChanRecvI64
	IntrChanRecvF64
	IntrChanRecvRef
	IntrChanTrySendI64
	IntrChanTrySendF64
	IntrChanTrySendRef
	IntrChanTryRecv
	IntrChanClose
	IntrChanLen
	IntrChanCap

	// ABI 1.5, select: a reusable set of channel cases that one wait
	// performs exactly one of, and the drain channel (docs/MESSAGING.md).
	IntrSelNew
	IntrSelRecv
	IntrSelSendI64
	IntrSelSendF64
	IntrSelSendRef
	IntrSelSetI64
	IntrSelSetF64
	IntrSelSetRef
	IntrSelWait
	IntrSelValueI64
	IntrSelValueF64
	IntrSelValueRef
	IntrSelClosed
	IntrChanDrain
	IntrSelEvent

	// ABI 1.6, maps: hash tables keyed by i64 or by the bytes of a
	// string or bytes object, with values of one type (docs/ISA.md,
	// "Maps"). They run in the VM loop, never as a request (Family.InVM).
	IntrMapNewI64I64
	IntrMapNewI64F64
	IntrMapNewI64Ref
	IntrMapNewStrI64
	IntrMapNewStrF64
	IntrMapNewStrRef
	IntrMapNewBytesI64
	IntrMapNewBytesF64
	IntrMapNewBytesRef
	IntrMapIGetI64
	IntrMapIGetF64
	IntrMapIGetRef
	IntrMapSGetI64
	IntrMapSGetF64
	IntrMapSGetRef
	IntrMapIPutI64
	IntrMapIPutF64
	IntrMapIPutRef
	IntrMapSPutI64
	IntrMapSPutF64
	IntrMapSPutRef
	IntrMapIDel
	IntrMapSDel
	IntrMapIHas
	IntrMapSHas
	IntrMapFound
	IntrMapLen
	IntrMapNext
	IntrMapKeyI64
	IntrMapKeyRef
	IntrMapValI64
	IntrMapValF64
	IntrMapValRef
	IntrMapDelAt
	// ABI 1.6, select over sockets and tasks: a case that fires when a
	// connection has something to read or a listener a connection to
	// accept, so that a connection task waits on its socket, its channels
	// and the drain at once, and one that fires when a task has ended
	// (docs/MESSAGING.md).
	IntrSelReadable
	IntrSelAcceptable
	IntrSelJoin

	// ABI 1.7, protocols: an HTTP/1.1 request head found and parsed in
	// one step, in the VM loop (vmloop/http_head.go; Family.InVM).
	IntrHTTPParseHead

	// ABI 1.8: an HTTP/1.1 reply head written in one step, in the VM loop
	// (vmloop/http_reply.go; Family.InVM), and whether a channel is
	// closed, also in the VM loop (vm_rows.go: Intrinsic.InVM).
	IntrHTTPPutHead
	IntrChanClosed
)

var (
	v10 = Version{1, 0}
	v11 = Version{1, 1}
	v12 = Version{1, 2}
	v13 = Version{1, 3}
	v14 = Version{1, 4}
	v15 = Version{1, 5}
	v16 = Version{1, 6}
	v17 = Version{1, 7}
	v18 = Version{1, 8}
)

var centralTable = []Intrinsic{
	{IntrSpawn, "task.spawn", nil, TRef, v10, SPAWN, false},
	{IntrJoinI64, "task.join_i64", []Type{TRef}, TI64, v10, JOINI, true},
	{IntrJoinF64, "task.join_f64", []Type{TRef}, TF64, v10, JOINF, true},
	{IntrJoinRef, "task.join_ref", []Type{TRef}, TRef, v10, JOINR, true},
	{IntrJoinVoid, "task.join_void", []Type{TRef}, TVoid, v10, JOINV, true},
	{IntrOutcome, "task.outcome", []Type{TRef}, TI64, v10, OUTCOME, true},
	{IntrYield, "task.yield", nil, TVoid, v10, YIELD, true},
	{IntrCancel, "task.cancel", []Type{TRef}, TVoid, v10, CANCEL, true},
	{IntrCancelled, "task.cancelled", nil, TI64, v10, CANCELLED, true},
	{IntrEventNew, "event.new", nil, TRef, v10, EVNEW, true},
	{IntrEventWait, "event.wait", []Type{TRef}, TVoid, v10, EVWAIT, true},
	{IntrEventSignal, "event.signal", []Type{TRef}, TVoid, v10, EVSIGNAL, true},
	{IntrEventBroadcast, "event.broadcast", []Type{TRef}, TVoid, v10, EVBCAST, true},
	{IntrPrintI64, "io.print_i64", []Type{TI64}, TVoid, v10, NOP, true},
	{IntrPrintF64, "io.print_f64", []Type{TF64}, TVoid, v10, NOP, true},
	{IntrPrintStr, "io.print_str", []Type{TRef}, TVoid, v10, NOP, true},
	{IntrTaskID, "task.id", nil, TI64, v10, NOP, true},

	{IntrTimeNow, "time.now", nil, TI64, v11, NOP, true},
	{IntrTimeSleep, "time.sleep", []Type{TI64}, TVoid, v11, NOP, true},
	{IntrTimeSleepUntil, "time.sleep_until", []Type{TI64}, TVoid, v11, NOP, true},
	{IntrTimeTimeout, "time.timeout", []Type{TI64}, TVoid, v11, NOP, true},
	{IntrTimePeriodic, "time.periodic", []Type{TI64, TI64}, TRef, v11, NOP, true},
	{IntrTimeTick, "time.tick", []Type{TRef}, TI64, v11, NOP, true},
	{IntrTimeJobMetric, "time.job_metric", []Type{TRef, TI64}, TF64, v11, NOP, true},
	{IntrTimeJobStats, "time.job_stats", []Type{TRef}, TRef, v11, NOP, true},

	{IntrNetListen, "net.listen", []Type{TRef}, TRef, v12, NOP, true},
	{IntrNetAccept, "net.accept", []Type{TRef}, TRef, v12, NOP, true},
	{IntrNetConnect, "net.connect", []Type{TRef}, TRef, v12, NOP, true},
	{IntrNetRead, "net.read", []Type{TRef, TRef, TI64}, TI64, v12, NOP, true},
	{IntrNetWrite, "net.write", []Type{TRef, TRef, TI64, TI64}, TI64, v12, NOP, true},
	{IntrNetClose, "net.close", []Type{TRef}, TVoid, v12, NOP, true},
	{IntrFileOpen, "file.open", []Type{TRef, TI64}, TRef, v12, NOP, true},
	{IntrFileRead, "file.read", []Type{TRef, TRef, TI64}, TI64, v12, NOP, true},
	{IntrFileWrite, "file.write", []Type{TRef, TRef, TI64, TI64}, TI64, v12, NOP, true},
	{IntrFileClose, "file.close", []Type{TRef}, TVoid, v12, NOP, true},

	{IntrNetReadN, "net.read_n", []Type{TRef, TRef, TI64, TI64}, TI64, v13, NOP, true},
	{IntrNetShutdown, "net.shutdown", []Type{TRef, TI64}, TVoid, v13, NOP, true},
	{IntrNetLocalAddr, "net.local_addr", []Type{TRef}, TRef, v13, NOP, true},
	{IntrNetPeerAddr, "net.peer_addr", []Type{TRef}, TRef, v13, NOP, true},
	{IntrNetListenOpts, "net.listen_opts", []Type{TRef, TI64}, TRef, v13, NOP, true},
	{IntrFileReadN, "file.read_n", []Type{TRef, TRef, TI64, TI64}, TI64, v13, NOP, true},

	{IntrTaskSetName, "task.set_name", []Type{TRef}, TVoid, v14, NOP, true},

	{IntrChanNewI64, "chan.new_i64", []Type{TI64}, TRef, v15, NOP, true},
	{IntrChanNewF64, "chan.new_f64", []Type{TI64}, TRef, v15, NOP, true},
	{IntrChanNewRef, "chan.new_ref", []Type{TI64}, TRef, v15, NOP, true},
	{IntrChanSendI64, "chan.send_i64", []Type{TRef, TI64}, TVoid, v15, NOP, true},
	{IntrChanSendF64, "chan.send_f64", []Type{TRef, TF64}, TVoid, v15, NOP, true},
	{IntrChanSendRef, "chan.send_ref", []Type{TRef, TRef}, TVoid, v15, NOP, true},
	{IntrChanRecvI64, "chan.recv_i64", []Type{TRef}, TI64, v15, NOP, true},
	{IntrChanRecvF64, "chan.recv_f64", []Type{TRef}, TF64, v15, NOP, true},
	{IntrChanRecvRef, "chan.recv_ref", []Type{TRef}, TRef, v15, NOP, true},
	{IntrChanTrySendI64, "chan.try_send_i64", []Type{TRef, TI64}, TI64, v15, NOP, true},
	{IntrChanTrySendF64, "chan.try_send_f64", []Type{TRef, TF64}, TI64, v15, NOP, true},
	{IntrChanTrySendRef, "chan.try_send_ref", []Type{TRef, TRef}, TI64, v15, NOP, true},
	{IntrChanTryRecv, "chan.try_recv", []Type{TRef}, TRef, v15, NOP, true},
	{IntrChanClose, "chan.close", []Type{TRef}, TVoid, v15, NOP, true},
	{IntrChanLen, "chan.len", []Type{TRef}, TI64, v15, NOP, true},
	{IntrChanCap, "chan.cap", []Type{TRef}, TI64, v15, NOP, true},
	{IntrSelNew, "sel.new", nil, TRef, v15, NOP, true},
	{IntrSelRecv, "sel.recv", []Type{TRef, TRef}, TI64, v15, NOP, true},
	{IntrSelSendI64, "sel.send_i64", []Type{TRef, TRef, TI64}, TI64, v15, NOP, true},
	{IntrSelSendF64, "sel.send_f64", []Type{TRef, TRef, TF64}, TI64, v15, NOP, true},
	{IntrSelSendRef, "sel.send_ref", []Type{TRef, TRef, TRef}, TI64, v15, NOP, true},
	{IntrSelSetI64, "sel.set_i64", []Type{TRef, TI64, TI64}, TVoid, v15, NOP, true},
	{IntrSelSetF64, "sel.set_f64", []Type{TRef, TI64, TF64}, TVoid, v15, NOP, true},
	{IntrSelSetRef, "sel.set_ref", []Type{TRef, TI64, TRef}, TVoid, v15, NOP, true},
	{IntrSelWait, "sel.wait", []Type{TRef, TI64}, TI64, v15, NOP, true},
	{IntrSelValueI64, "sel.value_i64", []Type{TRef}, TI64, v15, NOP, true},
	{IntrSelValueF64, "sel.value_f64", []Type{TRef}, TF64, v15, NOP, true},
	{IntrSelValueRef, "sel.value_ref", []Type{TRef}, TRef, v15, NOP, true},
	{IntrSelClosed, "sel.closed", []Type{TRef}, TI64, v15, NOP, true},
	{IntrChanDrain, "chan.drain", nil, TRef, v15, NOP, true},
	{IntrSelEvent, "sel.event", []Type{TRef, TRef}, TI64, v15, NOP, true},

	{IntrMapNewI64I64, "map.new_i64_i64", nil, TRef, v16, NOP, true},
	{IntrMapNewI64F64, "map.new_i64_f64", nil, TRef, v16, NOP, true},
	{IntrMapNewI64Ref, "map.new_i64_ref", nil, TRef, v16, NOP, true},
	{IntrMapNewStrI64, "map.new_str_i64", nil, TRef, v16, NOP, true},
	{IntrMapNewStrF64, "map.new_str_f64", nil, TRef, v16, NOP, true},
	{IntrMapNewStrRef, "map.new_str_ref", nil, TRef, v16, NOP, true},
	{IntrMapNewBytesI64, "map.new_bytes_i64", nil, TRef, v16, NOP, true},
	{IntrMapNewBytesF64, "map.new_bytes_f64", nil, TRef, v16, NOP, true},
	{IntrMapNewBytesRef, "map.new_bytes_ref", nil, TRef, v16, NOP, true},
	{IntrMapIGetI64, "map.iget_i64", []Type{TRef, TI64}, TI64, v16, NOP, true},
	{IntrMapIGetF64, "map.iget_f64", []Type{TRef, TI64}, TF64, v16, NOP, true},
	{IntrMapIGetRef, "map.iget_ref", []Type{TRef, TI64}, TRef, v16, NOP, true},
	{IntrMapSGetI64, "map.sget_i64", []Type{TRef, TRef}, TI64, v16, NOP, true},
	{IntrMapSGetF64, "map.sget_f64", []Type{TRef, TRef}, TF64, v16, NOP, true},
	{IntrMapSGetRef, "map.sget_ref", []Type{TRef, TRef}, TRef, v16, NOP, true},
	{IntrMapIPutI64, "map.iput_i64", []Type{TRef, TI64, TI64}, TVoid, v16, NOP, true},
	{IntrMapIPutF64, "map.iput_f64", []Type{TRef, TI64, TF64}, TVoid, v16, NOP, true},
	{IntrMapIPutRef, "map.iput_ref", []Type{TRef, TI64, TRef}, TVoid, v16, NOP, true},
	{IntrMapSPutI64, "map.sput_i64", []Type{TRef, TRef, TI64}, TVoid, v16, NOP, true},
	{IntrMapSPutF64, "map.sput_f64", []Type{TRef, TRef, TF64}, TVoid, v16, NOP, true},
	{IntrMapSPutRef, "map.sput_ref", []Type{TRef, TRef, TRef}, TVoid, v16, NOP, true},
	{IntrMapIDel, "map.idel", []Type{TRef, TI64}, TI64, v16, NOP, true},
	{IntrMapSDel, "map.sdel", []Type{TRef, TRef}, TI64, v16, NOP, true},
	{IntrMapIHas, "map.ihas", []Type{TRef, TI64}, TI64, v16, NOP, true},
	{IntrMapSHas, "map.shas", []Type{TRef, TRef}, TI64, v16, NOP, true},
	{IntrMapFound, "map.found", []Type{TRef}, TI64, v16, NOP, true},
	{IntrMapLen, "map.len", []Type{TRef}, TI64, v16, NOP, true},
	{IntrMapNext, "map.next", []Type{TRef, TI64}, TI64, v16, NOP, true},
	{IntrMapKeyI64, "map.key_i64", []Type{TRef, TI64}, TI64, v16, NOP, true},
	{IntrMapKeyRef, "map.key_ref", []Type{TRef, TI64}, TRef, v16, NOP, true},
	{IntrMapValI64, "map.val_i64", []Type{TRef, TI64}, TI64, v16, NOP, true},
	{IntrMapValF64, "map.val_f64", []Type{TRef, TI64}, TF64, v16, NOP, true},
	{IntrMapValRef, "map.val_ref", []Type{TRef, TI64}, TRef, v16, NOP, true},
	{IntrMapDelAt, "map.del_at", []Type{TRef, TI64}, TVoid, v16, NOP, true},
	{IntrSelReadable, "sel.readable", []Type{TRef, TRef}, TI64, v16, NOP, true},
	{IntrSelAcceptable, "sel.acceptable", []Type{TRef, TRef}, TI64, v16, NOP, true},
	{IntrSelJoin, "sel.join", []Type{TRef, TRef}, TI64, v16, NOP, true},

	{IntrHTTPParseHead, "http.parse_head", []Type{TRef, TI64, TI64, TI64, TI64, TRef}, TI64, v17, NOP, true},
	{IntrHTTPPutHead, "http.put_head", []Type{TRef, TI64, TI64, TRef, TI64, TI64}, TI64, v18, NOP, true},
	{IntrChanClosed, "chan.closed", []Type{TRef}, TI64, v18, NOP, true},
}

// Family is the group an intrinsic belongs to, a property of its row
// (never a range of IDs, so an intrinsic appended to the table is
// classified by the row that adds it): the VM loop runs the InVM
// families itself, by the family's rows (map_rows.go, http_head.go), and
// the bus's command table keeps the I/O families' rows apart
// (bus/io_table.go). What else an intrinsic does is the row of its
// family's table that names it; TestMapRows, TestHTTPRows, TestChanRows
// and the bus's TestCommandTable fail for an intrinsic of this table
// without its rows.
type Family uint8

// Families. A row's family is the prefix of its name ("net.read" is
// FamNet); the table's init refuses a prefix not listed here.
const (
	FamNone Family = iota // host intrinsics
	FamTask
	FamEvent
	FamPrint
	FamTime
	FamNet
	FamFile
	FamChan
	FamSel
	FamMap
	FamHTTP
)

var famNames = map[string]Family{"task": FamTask, "event": FamEvent, "io": FamPrint, "time": FamTime,
	"net": FamNet, "file": FamFile, "chan": FamChan, "sel": FamSel, "map": FamMap, "http": FamHTTP}

// IO reports whether the family is a socket or file family: its
// intrinsics need the io capability and go to the completion backends.
func (f Family) IO() bool { return f == FamNet || f == FamFile }

// InVM reports whether the family's intrinsics run inside the VM loop
// (the map family: a map is an object of the task's own heap; the http
// family: a parse of a bytes object of that heap), so that they never
// leave it as a Request. A few intrinsics of other families run there
// too (Intrinsic.InVM).
func (f Family) InVM() bool { return f == FamMap || f == FamHTTP }

// Family returns the intrinsic's family (FamNone for a host intrinsic).
func (in *Intrinsic) Family() Family {
	if in.ID < HostIntrinsicBase {
		return FamilyOf(in.ID)
	}
	return FamNone
}

// FamilyOf returns the family of central intrinsic id (FamNone for an ID
// the table does not have).
func FamilyOf(id IntrinsicID) Family {
	if int(id) < len(famByID) {
		return famByID[id]
	}
	return FamNone
}

var (
	famByID    []Family
	vmByID     []vmKind // where the VM loop answers an intrinsic, by ID (vm_rows.go)
	intrByName map[string]*Intrinsic
	intrByID   map[IntrinsicID]*Intrinsic
	intrByOp   [NumOps]*Intrinsic
)

func init() { indexIntrinsics() }

// indexIntrinsics (re)builds the lookups from centralTable: by name, by
// ID, by builtin opcode, and each row's family. Everything that knows an
// intrinsic (the assembler and linker, the verifier, the VM loop, the
// docs, the bus) finds it through these, so a row appended to the table
// is known everywhere (TestTestRowIsKnownEverywhere).
func indexIntrinsics() {
	famByID, vmByID = famByID[:0], vmByID[:0]
	intrByName = make(map[string]*Intrinsic, len(centralTable))
	intrByID = make(map[IntrinsicID]*Intrinsic, len(centralTable))
	intrByOp = [NumOps]*Intrinsic{}
	for i := range centralTable {
		in := &centralTable[i]
		if intrByName[in.Name] != nil || intrByID[in.ID] != nil {
			panic("vmloop: intrinsic " + in.Name + " is in the table twice (by name or by ID)")
		}
		intrByName[in.Name] = in
		intrByID[in.ID] = in
		dot := strings.IndexByte(in.Name, '.')
		fam, ok := famNames[in.Name[:max(dot, 0)]]
		if !ok {
			panic("vmloop: intrinsic " + in.Name + " has no family")
		}
		for int(in.ID) >= len(famByID) {
			famByID, vmByID = append(famByID, FamNone), append(vmByID, vmRequest)
		}
		famByID[in.ID] = fam
		vmByID[in.ID] = vmKindFor(in.ID, fam)
		if in.Builtin != NOP {
			intrByOp[in.Builtin] = in
			if opTable[in.Builtin].Intrinsic != in.Name {
				panic("vmloop: ISA table and intrinsic table disagree on " + in.Name)
			}
		}
	}
}

// indexRows indexes a family's rows (chan_rows.go, map_rows.go) by ID:
// one load per lookup, where the family's operations run.
func indexRows[R any](rows map[IntrinsicID]R) []*R {
	var idx []*R
	for id, row := range rows {
		for int(id) >= len(idx) {
			idx = append(idx, nil)
		}
		idx[id] = &row
	}
	return idx
}

// rowOf returns id's row in idx, or nil.
func rowOf[R any](idx []*R, id IntrinsicID) *R {
	if int(id) < len(idx) {
		return idx[id]
	}
	return nil
}

// CentralIntrinsics returns a copy of the central intrinsic table.
func CentralIntrinsics() []Intrinsic { return append([]Intrinsic(nil), centralTable...) }

// LookupIntrinsic finds a central intrinsic by name.
func LookupIntrinsic(name string) (*Intrinsic, bool) {
	in, ok := intrByName[name]
	return in, ok
}

// IntrinsicByID finds a central intrinsic by ID.
func IntrinsicByID(id IntrinsicID) (*Intrinsic, bool) {
	in, ok := intrByID[id]
	return in, ok
}

// BuiltinIntrinsic returns the central intrinsic a builtin opcode lowers to.
func BuiltinIntrinsic(op Op) *Intrinsic {
	if int(op) < NumOps {
		return intrByOp[op]
	}
	return nil
}

// Resolver finds intrinsics that are not in the central table (host
// intrinsics registered by an embedding). It may be nil.
type Resolver interface {
	ResolveIntrinsic(name string) (*Intrinsic, bool)
}
