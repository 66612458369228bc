package evpoll

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCompletionErr(t *testing.T) {
	require.NoError(t, (Completion{Res: 5}).Err(), "Res 5")
	err := Completion{Res: -int32(syscall.EINVAL)}.Err()
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Res -EINVAL: %v", err)
	}
	if !(Completion{Flags: FlagCancelled}).Cancelled() || (Completion{}).Cancelled() {
		t.Fatal("Cancelled does not follow FlagCancelled")
	}
}

func TestKindNames(t *testing.T) {
	seen := map[string]bool{}
	for k := Kind(0); k < NumKinds; k++ {
		name := k.String()
		if name == "" || seen[name] || strings.HasPrefix(name, "kind(") {
			t.Fatalf("kind %d: name %q", k, name)
		}
		seen[name] = true
	}
	if got := Kind(200).String(); got != "kind(200)" {
		t.Fatalf("Kind(200) = %q", got)
	}
}

func TestCountersSnapshot(t *testing.T) {
	var c Counters
	c.Submitted.Add(3)
	c.Ops[Recv].Add(2)
	c.Overflows.Add(1)
	s := c.Snapshot()
	if s.Submitted != 3 || s.Ops[Recv] != 2 || s.Overflows != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	if str := s.String(); !strings.Contains(str, "submitted=3") || !strings.Contains(str, "recv=2") || strings.Contains(str, "send=") {
		t.Fatalf("String() = %q", str)
	}
}
