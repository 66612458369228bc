package evpoll

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCheckOp(t *testing.T) {
	good := []*Op{
		{Kind: Nop},
		{Kind: Connect, Addr: netip.MustParseAddrPort("127.0.0.1:1")},
		{Kind: Open, Path: "/tmp/x"},
	}
	for _, op := range good {
		if err := CheckOp(op); err != nil {
			t.Errorf("%v: %v", op.Kind, err)
		}
	}
	bad := []*Op{nil, {Kind: NumKinds}, {Kind: Connect}, {Kind: Open, Path: "a\x00b"}}
	for _, op := range bad {
		if err := CheckOp(op); !errors.Is(err, ErrInvalidOp) {
			t.Errorf("%+v: %v, want ErrInvalidOp", op, err)
		}
	}
}
