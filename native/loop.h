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
 * 64-bit platform. */
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
	int64_t kint;      /* in: offset of the KInt pool in words */
	int64_t kflt;      /* in: offset of the KFlt pool in words */
	int64_t exit;      /* out: JN_EXIT_* */
} jn_io;

/* The instruction at frames[fp].pc must run in Go; it is not charged. */
#define JN_EXIT_OP 1
/* A safe point with the budget spent or the stop flag set; frames[fp].pc
 * is the next instruction to run. */
#define JN_EXIT_PREEMPT 2

/* funcs: three int64 per function {code offset in words, nregs, nparams}.
 * stop: the uint32 of the task's atomic stop flag. Returns io->exit. */
int64_t jn_run(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *words,
               const int64_t *funcs, const uint32_t *stop);

#endif
