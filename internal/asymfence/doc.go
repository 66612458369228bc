// Package asymfence orders a store-then-load pair whose two sides run at
// very different rates: a light side that runs often (a worker taking a
// live-task credit from its own bank, once per spawn) and a heavy side
// that runs seldom (another goroutine revoking that bank to take its
// credits back).
//
// Each side stores a word and then loads the other side's word (Dekker's
// pattern): at least one of the two loads must see the other's store.
// With sync/atomic's Store on both sides that holds, but on amd64 Store is
// an XCHG, a locked instruction that drains the store buffer and waits
// for the cache line: on the light side, once per operation. Here the light
// side publishes with a release store instead (StoreUint32: a plain MOV),
// and the heavy side, after its own sequentially consistent store, calls
// Heavy: a membarrier(2) system call with MEMBARRIER_CMD_PRIVATE_EXPEDITED,
// which runs a full memory barrier on every thread of the process that
// is running at that moment (a thread that is not running has passed
// through one in its context switch). So either the light side's store
// was before that barrier, and the heavy side's load after Heavy sees it,
// or the light side's load comes after the barrier, and sees the heavy
// side's store. The Linux kernel's documentation of membarrier(2) calls
// this pattern "asymmetric fences"; liburcu and Folly use it the same way.
//
// Asymmetric reports whether that is in force: on linux/amd64 with the gc
// compiler, without the race detector, once registration with the kernel
// succeeded (Linux 4.14 and later, where seccomp allows it), and unless
// the environment sets JADE_ASYMFENCE=off. Elsewhere StoreUint32 and
// StoreUint64 are a swap and Heavy swaps a word of its own: both sides
// are then sequentially consistent read-modify-writes. On arm64 Store
// (STLR) followed by Load (LDAR) would do on the hardware, but qemu-user
// runs that pair on an x86-64 host without keeping its order (make
// arm64's store-buffering litmus test shows it), and a swap is a locked
// instruction there too.
//
// Heavy costs the caller about 2 µs and every other running thread of the
// process an interrupt (about a microsecond on a 2-vCPU VM): call it only
// where the alternative is a locked instruction on every light-side
// operation, and the heavy side runs far less often, seldom while the
// light side's threads are busy: the interrupt lands in their work
// (docs/PERFORMANCE.md, "A push without a locked store", where a barrier
// per parking worker cost a hand-off 1.5× its time).
package asymfence
