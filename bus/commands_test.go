package bus

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/internal/evpoll"
	"github.com/jadevm/jade/sched"
	"github.com/jadevm/jade/vmloop"
)

// TestCommandTable: every central intrinsic that can be a request (not of
// a family that runs in the VM loop: Family.InVM) has a row with a handler;
// every row says what grants it; a row that names a capability names one;
// a mutating row is guarded by a capability or a handle, never open to
// any task; the families that suspend have a resume, and those whose
// wait carries a resource an abandon; every net.* and
// file.* intrinsic has a complete I/O row (checkIORow).
func TestCommandTable(t *testing.T) {
	suspends := map[vmloop.IntrinsicID]bool{
		vmloop.IntrJoinI64: true, vmloop.IntrJoinF64: true, vmloop.IntrJoinRef: true, vmloop.IntrJoinVoid: true,
		vmloop.IntrOutcome: true, vmloop.IntrEventWait: true, vmloop.IntrTimeSleep: true, vmloop.IntrTimeSleepUntil: true,
		vmloop.IntrTimeTick:    true,
		vmloop.IntrChanSendI64: true, vmloop.IntrChanSendF64: true, vmloop.IntrChanSendRef: true,
		vmloop.IntrChanRecvI64: true, vmloop.IntrChanRecvF64: true, vmloop.IntrChanRecvRef: true,
	}
	for _, in := range vmloop.CentralIntrinsics() {
		c := commandOf(in.ID)
		if in.InVM() {
			require.Nil(t, c, "%s runs in the VM loop, never as a request, but has a row", in.Name)
			continue
		}
		require.NotNil(t, c, "%s has no row in the command table", in.Name)
		require.NotNil(t, c.handle, "%s: no handler", in.Name)
		switch c.grant {
		case grantCap:
			require.NotZero(t, c.need, "%s: grantCap without a capability", in.Name)
		case grantSelf:
			require.False(t, c.mutates, "%s changes state beyond its task but is open to every task", in.Name)
			require.Zero(t, c.need, in.Name)
		case grantHandle:
			require.Zero(t, c.need, in.Name)
		default:
			t.Fatalf("%s: row without a grant", in.Name)
		}
		if c.mutates {
			require.Contains(t, []grant{grantCap, grantHandle}, c.grant, "%s mutates without a capability or a handle", in.Name)
		}
		if in.Family().IO() {
			require.Equal(t, CapIO, c.need, "%s: a socket or file intrinsic without the io capability", in.Name)
			if c.resume != nil {
				require.Equal(t, sched.WaitIO, c.wait, "%s: a stalled task waiting in it is not reported as waiting for I/O", in.Name)
			}
			checkIORow(t, in.Name, c)
		} else {
			require.Nil(t, c.io, "%s: an I/O part in a row outside net.* and file.*", in.Name)
		}
		if in.Family() == vmloop.FamChan && in.ID != vmloop.IntrChanNewI64 && in.ID != vmloop.IntrChanNewF64 && in.ID != vmloop.IntrChanNewRef && in.ID != vmloop.IntrChanDrain {
			require.Equal(t, grantHandle, c.grant, "%s: a channel operation is granted by the channel handle", in.Name)
		}
		if (in.Family() == vmloop.FamChan && c.resume != nil) || in.ID == vmloop.IntrEventWait || in.ID == vmloop.IntrSelWait {
			require.NotNil(t, c.abandon, "%s: its wait carries a message, signal or case, but its row does not release it when the task is cancelled", in.Name)
		}
		if c.resume == nil {
			require.Nil(t, c.abandon, "%s: never suspends, yet abandoned", in.Name)
		}
		if suspends[in.ID] {
			require.NotNil(t, c.resume, "%s suspends but has no resume", in.Name)
		}
		if c.wait != "" || c.describe != nil {
			require.NotNil(t, c.resume, "%s: describes a wait but never suspends", in.Name)
		}
		// A handler shared by several rows that tells them apart by ID
		// serves only the IDs it knows: completeJoin tells task.outcome
		// and task.join_void from the value joins.
		if funcPC(c.handle) == funcPC((*Bus).join) {
			require.Contains(t, []vmloop.IntrinsicID{vmloop.IntrJoinI64, vmloop.IntrJoinF64, vmloop.IntrJoinRef, vmloop.IntrJoinVoid, vmloop.IntrOutcome},
				in.ID, "%s: a new row of the join handler (completeJoin tells the joins apart by ID)", in.Name)
		}
	}
	require.Empty(t, commandCoverage())
}

// commandCoverage lists the central intrinsics that can be a request but
// have no command row, and the rows of an ID that is no such intrinsic.
func commandCoverage() []string {
	var bad []string
	for _, in := range vmloop.CentralIntrinsics() {
		if !in.InVM() && commandOf(in.ID) == nil {
			bad = append(bad, in.Name+": no command row")
		}
	}
	for id, c := range commands {
		in, ok := vmloop.IntrinsicByID(vmloop.IntrinsicID(id))
		if c != nil && (!ok || in.InVM()) {
			bad = append(bad, fmt.Sprintf("intrinsic %d: a command row, but no central intrinsic that is a request", id))
		}
	}
	return bad
}

// TestCommandCoverageFindsGaps: the coverage check of TestCommandTable
// reports an intrinsic whose row is missing (as one appended to vmloop's
// table without a row here would be) and a row of no intrinsic.
func TestCommandCoverageFindsGaps(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append([]*command(nil), saved...)
	commands[vmloop.IntrTaskSetName] = nil
	commands = append(commands, &command{grant: grantSelf})
	require.Equal(t, []string{
		"task.set_name: no command row",
		fmt.Sprintf("intrinsic %d: a command row, but no central intrinsic that is a request", len(commands)-1),
	}, commandCoverage())
}

// checkIORow: the I/O part of net.* or file.* row c is complete. The
// command row is the one ioCommandRow makes (the dispatcher, resume and
// abandon read the I/O part); the argument names a handle kind or none;
// an operation that submits to a backend is completed by done and
// resumed, one that produces a descriptor (accept, open, connect)
// releases it when abandoned; one done on the worker (kind Nop) never
// suspends, so has nothing to complete, time or release.
func checkIORow(t *testing.T, name string, c *command) {
	t.Helper()
	op := c.io
	require.NotNil(t, op, "%s: an I/O intrinsic without an I/O row (ioRows)", name)
	require.NotNil(t, op.start, "%s: no start", name)
	require.Contains(t, []string{"", "listener", "conn", "file", "socket"}, op.arg, "%s: argument handle %q", name, op.arg)
	require.Equal(t, op.timed, c.timed, "%s: the command row's timed is not its I/O row's", name)
	require.Equal(t, funcPC((*Bus).ioCommand), funcPC(c.handle), "%s: not dispatched by its I/O row", name)
	if op.kind == evpoll.Nop {
		require.Nil(t, c.resume, "%s: done on the worker, yet resumed", name)
		require.False(t, op.timed, "%s: done on the worker, yet timed", name)
		require.True(t, op.done == nil && op.failed == nil && op.abandon == nil, "%s: done on the worker, yet completes a backend operation", name)
		return
	}
	require.Less(t, op.kind, evpoll.NumKinds, name)
	require.NotNil(t, op.done, "%s: submits a %s but has no done", name, op.kind)
	require.Equal(t, funcPC((*Bus).ioResume), funcPC(c.resume), "%s: not resumed by its I/O row", name)
	require.Equal(t, funcPC((*Bus).ioAbandon), funcPC(c.abandon), "%s: not abandoned by its I/O row", name)
	switch op.kind {
	case evpoll.Accept, evpoll.Open, evpoll.Connect:
		require.NotNil(t, op.abandon, "%s: a %s's descriptor leaks when its task is cancelled", name, op.kind)
	}
}

func funcPC(f any) uintptr { return reflect.ValueOf(f).Pointer() }
