package bus

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestClipNameCopies: a task name never shares the memory of the string
// it was cut from (it would pin the whole source for the task's life),
// cut or not.
func TestClipNameCopies(t *testing.T) {
	src := strings.Repeat("ab", 1<<20)
	within := func(s string) bool {
		p, base := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(src)))
		return p >= base && p < base+uintptr(len(src))
	}
	long := clipName(src)
	require.Len(t, long, MaxTaskName)
	require.False(t, within(long), "a cut name shares its source")
	short := clipName(src[:10])
	require.Equal(t, src[:10], short)
	require.False(t, within(short), "a short name shares its source")
	require.Equal(t, strings.Repeat("x", MaxTaskName-1), clipName(strings.Repeat("x", MaxTaskName-1)+"é"), "cut at a rune boundary")
}
