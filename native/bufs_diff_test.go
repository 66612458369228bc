package native

import (
	"math"
	"testing"

	"github.com/jadevm/jade/internal/vmhook"
	"github.com/jadevm/jade/vmloop"
)

// srcBufs writes and reads six byte buffers in turn (more than the C
// loop's table of buffers holds, so slots are replaced) and sums them.
const srcBufs = `
.abi 1.0
.func main(n:i64) -> i64
  .local b0:ref, b1:ref, b2:ref, b3:ref, b4:ref, b5:ref, i:i64, v:i64, s:i64, len:i64
  bnew  b0, n
  bnew  b1, n
  bnew  b2, n
  bnew  b3, n
  bnew  b4, n
  bnew  b5, n
  const i, 0
  const s, 0
loop:
  jge   i, n, done
  bset  b0, i, i
  bset  b1, i, i
  bset  b2, i, i
  bset  b3, i, i
  bset  b4, i, i
  bset  b5, i, i
  bget  v, b3, i
  add   s, s, v
  bget  v, b5, i
  add   s, s, v
  bget  v, b0, i
  add   s, s, v
  blen  len, b4
  add   s, s, len
  addi  i, i, 1
  jmp   loop
done:
  ret   s
.end
`

// srcBufTraps traps on a byte buffer by mode m: 0 bget out of range, 1
// bget of a freed buffer, 2 bget of the null handle, 3 bset out of range,
// 4 blen of a freed buffer; after using the buffer in C first.
const srcBufTraps = `
.abi 1.0
.func main(m:i64) -> i64
  .local b:ref, c:ref, a:ref, i:i64, v:i64, k:i64, j:i64
  const k, 8
  bnew  b, k
  anew  a, k, ref
  const j, 0
  agetr c, a, j
  const v, 0
  const j, 0
warm:
  jge   j, k, warmed
  bset  b, j, j
  bget  v, b, j
  addi  j, j, 1
  jmp   warm
warmed:
  const i, 3
  jnei  m, 0, m1
  const i, 8
  bget  v, b, i
  ret   v
m1:
  jnei  m, 1, m2
  free  b
  bget  v, b, i
  ret   v
m2:
  jnei  m, 2, m3
  bget  v, c, i
  ret   v
m3:
  jnei  m, 3, m4
  const i, -1
  bset  b, i, k
  ret   v
m4:
  free  b
  blen  v, b
  ret   v
.end
`

// TestDiffBufs covers blen, bget and bset in C: the table of buffers,
// replaced slots, and the traps of bad handles and indexes.
func TestDiffBufs(t *testing.T) {
	needC(t)
	lim := vmloop.DefaultLimits
	defer vmhook.SetFallback(vmhook.DefaultFallback)
	p := mustProgram(t, "bufs", srcBufs)
	q := mustProgram(t, "buftraps", srcBufTraps)
	for _, fb := range []int{0, vmhook.DefaultFallback} {
		vmhook.SetFallback(fb)
		for _, b := range []func() int64{budgets(1), budgets(2, 3, 5, 7), budgets(97), budgets(math.MaxInt64 / 2)} {
			if st := diff(t, "bufs", p, 0, []vmloop.Value{vmloop.I64(300)}, lim, b); st.sig != vmloop.SigCompleted {
				t.Fatalf("bufs: %v", st.sig)
			}
			for m := int64(0); m < 5; m++ {
				if st := diff(t, "buftraps", q, 0, []vmloop.Value{vmloop.I64(m)}, lim, b); st.sig != vmloop.SigTrapped {
					t.Fatalf("buftraps %d: %v", m, st.sig)
				}
			}
		}
	}
	e, _ := vmloop.NewExec(p, 0, []vmloop.Value{vmloop.I64(300)}, lim, 1)
	for e.Run(1000) == vmloop.SigPreempted {
	}
	want := int64(300 * 300) // blen
	for i := int64(0); i < 300; i++ {
		want += 3 * (i & 0xff) // bset keeps the low byte
	}
	if got := e.Result().Int(); got != want {
		t.Errorf("bufs = %d, want %d", got, want)
	}
}
