package feature

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeTB records how Missing ended a test.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = format
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = true
	f.msg = format
}

func TestMissing(t *testing.T) {
	cause := errors.New("uring: setup: function not implemented (kernel without io_uring)")
	for _, c := range []struct {
		env        string
		fail, skip bool
	}{
		{"", false, true},
		{"io_uring", true, false},
		{"ipv6,io_uring", true, false},
		{"io_uring_x", false, true},
	} {
		t.Setenv(Env, c.env)
		f := &fakeTB{}
		Missing(f, "io_uring", cause)
		require.Equal(t, c.fail, f.failed, "JADE_REQUIRE=%q", c.env)
		require.Equal(t, c.skip, f.skipped, "JADE_REQUIRE=%q", c.env)
	}
}
