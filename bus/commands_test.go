package bus

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// TestCommandTable: every central intrinsic that can be a request (not of
// a family that runs in the VM loop: Family.InVM) has a row with a handler;
// every row says what grants it; a row that names a capability names one;
// a mutating row is guarded by a capability or a handle, never open to
// any task; the families that suspend have a resume.
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
		if in.Family().InVM() {
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
			require.True(t, isIO(in.ID), "%s: not classified as I/O", in.Name)
		}
		if in.Family() == vmloop.FamChan && in.ID != vmloop.IntrChanNewI64 && in.ID != vmloop.IntrChanNewF64 && in.ID != vmloop.IntrChanNewRef && in.ID != vmloop.IntrChanDrain {
			require.Equal(t, grantHandle, c.grant, "%s: a channel operation is granted by the channel handle", in.Name)
		}
		if suspends[in.ID] || (in.Family().IO() && in.ID != vmloop.IntrNetListen && in.ID != vmloop.IntrNetListenOpts &&
			in.ID != vmloop.IntrNetShutdown && in.ID != vmloop.IntrNetLocalAddr && in.ID != vmloop.IntrNetPeerAddr) {
			require.NotNil(t, c.resume, "%s suspends but has no resume", in.Name)
		}
	}
	rows, requests := 0, 0
	for _, c := range commands {
		if c != nil {
			rows++
		}
	}
	for _, in := range vmloop.CentralIntrinsics() {
		if !in.Family().InVM() {
			requests++
		}
	}
	require.Equal(t, requests, rows, "a row for an ID that is not a central intrinsic")
}
