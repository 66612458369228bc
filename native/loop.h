//go:build cgo && !purego && (amd64 || arm64 || riscv64 || ppc64le || loong64 || s390x || mips64 || mips64le || ppc64)

/* The C twin of the Jade VM's Go interpreter loop (vmloop/interp.go).
 *
 * jn_run runs the hot subset of the ISA (docs/ISA.md) on the task's own
 * register stack and frame stack, charging reductions with the exact rule
 * of the Go loop, and returns to Go with one of the JN_EXIT_* codes. See
 * native/doc.go for the list of exits. */
#ifndef JADE_NATIVE_LOOP_H
#define JADE_NATIVE_LOOP_H

#include <stdint.h>

/* One activation; the layout of vmloop's frame {fn, pc, base int} on a
 * 64-bit platform. During a call of jn_run, a frame below the current one
 * that jn_run pushed a frame on top of holds, in fn, ~(offset of its code
 * in the prepared program) (a negative number) instead of its function
 * index and, in pc, 16 * its pc; the current frame's fn and pc are not
 * kept up to date. jn_run puts every index and pc back before it returns,
 * so Go only ever sees its own form. */
typedef struct {
	int64_t fn;
	int64_t pc;
	int64_t base;
} jn_frame;

/* In/out scalars of one call (lives on the Go stack: no pointers). */
typedef struct {
	int64_t fp;        /* in/out: index of the current frame */
	int64_t left;      /* in/out: budget left */
	int64_t nregs;     /* in: slots in the register stack */
	int64_t nframes;   /* in: frames in the frame stack */
	int64_t maxframes; /* in: call depth limit (Limits.MaxFrames) */
	int64_t exit;      /* out: JN_EXIT_* */
} jn_io;

/* A byte buffer of the task heap (vmloop.NativeBuf): handle, contents (n
 * bytes, pinned by Go; 0 when n is 0). */
typedef struct {
	uint64_t h;
	uint8_t *p;
	int64_t n;
} jn_buf;

/* The buffers a call may access (vmloop.NativeBufs): every handle in
 * b[0..n) names a live byte buffer of that length for the whole call. */
#define JN_NBUFS 4
typedef struct {
	int64_t n;
	jn_buf b[JN_NBUFS];
} jn_bufs;

/* The instruction at frames[fp].pc must run in Go; it is not charged. */
#define JN_EXIT_OP 1
/* A safe point with the budget spent or the stop flag set; frames[fp].pc
 * is the next instruction to run. */
#define JN_EXIT_PREEMPT 2

/* jn_prep_size is the number of words of the prepared program of a
 * flattened program of nwords words (the code of its nfuncs functions in
 * its first ncode words, then the constant pools). */
int64_t jn_prep_size(int64_t nwords, int64_t ncode, int64_t nfuncs);

/* jn_prepare writes to out (jn_prep_size words) the program that jn_run
 * runs, made from the flattened program words (see jn_prep_size; kflt is
 * the offset of the KFlt pool in it) and funcs, three int64 per function
 * {code offset in words, nregs, nparams}:
 *
 *   - a header: the offsets in out of the KInt pool, of the KFlt pool and
 *     of the function table, then 0;
 *   - each function: {its index, nregs}, then two words per instruction,
 *     at the instruction's pc: a handler word (the address of the handler
 *     of jn_run that runs it, or its number in the switch build) and an
 *     operand word (the instruction word, except that a call's function
 *     index is replaced by the offset in out of the callee's code and a
 *     branch's target pc t by 16 * (t + 1), except in a function of more
 *     than about 2^27 instructions, too long for that encoding);
 *   - the constant pools, as in words;
 *   - the function table: per function, the offset in out of its code.
 *
 * The handlers are chosen in loop.c (superinstructions). Handler
 * addresses are valid in this process only: out must not be kept
 * elsewhere. */
void jn_prepare(uint64_t *out, const uint64_t *words, int64_t nwords, const int64_t *funcs, int64_t nfuncs,
                int64_t ncode, int64_t kflt);

/* prog: the output of jn_prepare. stop: the uint32 of the task's atomic
 * stop flag. bufs: 0 or the byte buffers blen, bget and bset may access
 * (they exit on any other handle). Returns io->exit. */
int64_t jn_run(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *prog, const uint32_t *stop,
               const jn_bufs *bufs);

#endif
