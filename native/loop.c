//go:build cgo && !purego && (amd64 || arm64 || riscv64 || ppc64le || loong64 || s390x || mips64 || mips64le || ppc64)

/* The C twin of the Jade VM's Go interpreter loop. See loop.h and doc.go.
 *
 * Written to need no compiler flags beyond cgo's defaults and to have no
 * undefined behaviour: i64 arithmetic is done on uint64_t (wrapping),
 * signed views go through jn_s (no implementation-defined conversion),
 * division checks zero and MIN / -1 first, shift counts are masked,
 * ftoi saturates with NaN -> 0. Dispatch is by computed goto (GCC and
 * Clang labels-as-values), with a switch fallback for other compilers. */
#include "loop.h"

#include <math.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* never fuse fmul+fadd: Go does not */
#endif

/* Opcode numbers: vmloop/isa.go (part of the binary format, append only).
 * native_test.go checks them against vmloop by name (jn_op_name). */
enum {
	OP_NOP = 0, OP_MOVI, OP_MOVF, OP_MOVR, OP_LDI, OP_LDK, OP_LDF, OP_LDS,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_NEG, OP_AND, OP_OR, OP_XOR,
	OP_SHL, OP_SHR, OP_SAR, OP_ADDI, OP_SUBI, OP_MULI, OP_ANDI, OP_SHLI,
	OP_SHRI, OP_SARI, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_FADD,
	OP_FSUB, OP_FMUL, OP_FDIV, OP_FNEG, OP_FSQRT, OP_FLT, OP_FLE, OP_FEQ,
	OP_ITOF, OP_FTOI, OP_JMP, OP_JZ, OP_JNZ, OP_JEQ, OP_JNE, OP_JLT, OP_JLE,
	OP_JGT, OP_JGE, OP_JEQI, OP_JNEI, OP_JLTI, OP_JLEI, OP_JGTI, OP_JGEI,
	OP_CALL, OP_RET, OP_RETV, OP_TAILCALL,
	OP_NHOT /* opcodes from here on always exit to Go */
};

static const char *const jn_names[OP_NHOT] = {
	"nop", "movi", "movf", "movr", "ldi", "ldk", "ldf", "lds",
	"add", "sub", "mul", "div", "rem", "neg", "and", "or", "xor",
	"shl", "shr", "sar", "addi", "subi", "muli", "andi", "shli",
	"shri", "sari", "eq", "ne", "lt", "le", "gt", "ge", "fadd",
	"fsub", "fmul", "fdiv", "fneg", "fsqrt", "flt", "fle", "feq",
	"itof", "ftoi", "jmp", "jz", "jnz", "jeq", "jne", "jlt", "jle",
	"jgt", "jge", "jeqi", "jnei", "jlti", "jlei", "jgti", "jgei",
	"call", "ret", "retv", "tailcall",
};

/* jn_op_name returns the mnemonic of opcode op as this file numbers it,
 * or 0 past the hot range (for the consistency test). */
const char *jn_op_name(int op) {
	if (op < 0 || op >= OP_NHOT)
		return 0;
	return jn_names[op];
}

/* jn_hot reports whether jn_run executes opcode op (lds always exits). */
int jn_hot(int op) { return op >= 0 && op < OP_NHOT && op != OP_LDS; }

/* Signed view of a register without implementation-defined conversion. */
static inline int64_t jn_s(uint64_t u) {
	return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* Field D (bits 32..63) sign-extended, and BC (bits 16..31). */
static inline int64_t jn_d(uint64_t ins) {
	return (int64_t)((ins >> 32) ^ 0x80000000u) - (int64_t)0x80000000;
}
static inline int64_t jn_bc(uint64_t ins) {
	return (int64_t)(((ins >> 16) & 0xffffu) ^ 0x8000u) - (int64_t)0x8000;
}

static inline double jn_f(uint64_t u) {
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}
static inline uint64_t jn_fb(double d) {
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

/* Arithmetic shift right on the bit pattern (count already masked). */
static inline uint64_t jn_sar(uint64_t x, unsigned n) {
	return (x >> 63) ? ~(~x >> n) : x >> n;
}

/* ftoi: truncate toward zero, saturate, NaN -> 0 (vmloop's ftoi). */
static inline uint64_t jn_ftoi(double x) {
	if (x != x)
		return 0;
	if (x >= 0x1p63)
		return (uint64_t)INT64_MAX;
	if (x <= -0x1p63)
		return (uint64_t)INT64_MAX + 1; /* MIN */
	return (uint64_t)(int64_t)x;
}

#if defined(__GNUC__) && !defined(JN_NO_GOTO) /* JN_NO_GOTO: test the switch */
#define JN_GOTO 1
#define JN_STOPPED() (__atomic_load_n(stop, __ATOMIC_ACQUIRE) != 0)
#else
#define JN_STOPPED() (*(volatile const uint32_t *)stop != 0)
#endif

/* GCC's cross-jumping merges the 62 replicated dispatch jumps of the
 * threaded handlers into about 6 shared ones, which defeats the point of
 * threaded dispatch (per-handler branch prediction). The command-line fix
 * (-fno-crossjumping) is not in cgo's flag allow-list, so the function
 * asks for it itself; other compilers ignore nothing they need here. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-crossjumping")))
#endif
int64_t jn_run(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *words,
               const int64_t *funcs, const uint32_t *stop) {
	int64_t fp = io->fp;
	int64_t left = io->left;
	const int64_t nregs = io->nregs, nframes = io->nframes, maxframes = io->maxframes;
	const uint64_t *const kint = words + io->kint;
	const uint64_t *const kflt = words + io->kflt;
	const uint64_t *code = words + funcs[3 * frames[fp].fn];
	int64_t pc = frames[fp].pc;
	uint64_t *r = regs + frames[fp].base;
	uint64_t ins;

#define A ((unsigned)(ins >> 8) & 0xffu)
#define B ((unsigned)(ins >> 16) & 0xffu)
#define C ((unsigned)(ins >> 24) & 0xffu)
#define D jn_d(ins)
#define RA r[A]
#define RB r[B]
#define RC r[C]
/* A safe point after a control transfer: preempt when the budget is spent
 * or Stop was called (the stop flag is read only when the budget is not). */
#define SAFEPOINT()                                \
	do {                                           \
		if (left <= 0 || JN_STOPPED())             \
			goto preempt;                          \
	} while (0)
#define BRANCH(cond)                               \
	do {                                           \
		if (cond) {                                \
			int64_t t_ = D;                        \
			int back_ = t_ < pc;                   \
			pc = t_;                               \
			if (back_)                             \
				SAFEPOINT();                       \
		}                                          \
		NEXT();                                    \
	} while (0)

#ifdef JN_GOTO
	static void *const tab[256] = {
		[OP_LDS] = &&exit_op, [OP_NHOT ... 255] = &&exit_op,
		[OP_NOP] = &&L_NOP, [OP_MOVI] = &&L_MOVI, [OP_MOVF] = &&L_MOVF,
		[OP_MOVR] = &&L_MOVR, [OP_LDI] = &&L_LDI, [OP_LDK] = &&L_LDK,
		[OP_LDF] = &&L_LDF, [OP_ADD] = &&L_ADD, [OP_SUB] = &&L_SUB,
		[OP_MUL] = &&L_MUL, [OP_DIV] = &&L_DIV, [OP_REM] = &&L_REM,
		[OP_NEG] = &&L_NEG, [OP_AND] = &&L_AND, [OP_OR] = &&L_OR,
		[OP_XOR] = &&L_XOR, [OP_SHL] = &&L_SHL, [OP_SHR] = &&L_SHR,
		[OP_SAR] = &&L_SAR, [OP_ADDI] = &&L_ADDI, [OP_SUBI] = &&L_SUBI,
		[OP_MULI] = &&L_MULI, [OP_ANDI] = &&L_ANDI, [OP_SHLI] = &&L_SHLI,
		[OP_SHRI] = &&L_SHRI, [OP_SARI] = &&L_SARI, [OP_EQ] = &&L_EQ,
		[OP_NE] = &&L_NE, [OP_LT] = &&L_LT, [OP_LE] = &&L_LE, [OP_GT] = &&L_GT,
		[OP_GE] = &&L_GE, [OP_FADD] = &&L_FADD, [OP_FSUB] = &&L_FSUB,
		[OP_FMUL] = &&L_FMUL, [OP_FDIV] = &&L_FDIV, [OP_FNEG] = &&L_FNEG,
		[OP_FSQRT] = &&L_FSQRT, [OP_FLT] = &&L_FLT, [OP_FLE] = &&L_FLE,
		[OP_FEQ] = &&L_FEQ, [OP_ITOF] = &&L_ITOF, [OP_FTOI] = &&L_FTOI,
		[OP_JMP] = &&L_JMP, [OP_JZ] = &&L_JZ, [OP_JNZ] = &&L_JNZ,
		[OP_JEQ] = &&L_JEQ, [OP_JNE] = &&L_JNE, [OP_JLT] = &&L_JLT,
		[OP_JLE] = &&L_JLE, [OP_JGT] = &&L_JGT, [OP_JGE] = &&L_JGE,
		[OP_JEQI] = &&L_JEQI, [OP_JNEI] = &&L_JNEI, [OP_JLTI] = &&L_JLTI,
		[OP_JLEI] = &&L_JLEI, [OP_JGTI] = &&L_JGTI, [OP_JGEI] = &&L_JGEI,
		[OP_CALL] = &&L_CALL, [OP_RET] = &&L_RET, [OP_RETV] = &&L_RETV,
		[OP_TAILCALL] = &&L_TAILCALL,
	};
/* Threaded dispatch: every handler ends with its own indirect jump. */
#define NEXT()                                     \
	do {                                           \
		ins = code[pc++];                          \
		left--;                                    \
		goto *tab[ins & 0xffu];                    \
	} while (0)
#define CASE(op) L_##op:
	NEXT();
#else
#define NEXT() goto dispatch
#define CASE(op) case OP_##op:
dispatch:
	ins = code[pc++];
	left--;
	switch (ins & 0xffu) {
	default:
		goto exit_op;
#endif

	/* data */
	CASE(NOP) NEXT();
	CASE(MOVI) RA = RB; NEXT();
	CASE(MOVF) RA = RB; NEXT();
	CASE(MOVR) RA = RB; NEXT(); /* a handle is copied; no heap access */
	CASE(LDI) RA = (uint64_t)D; NEXT();
	CASE(LDK) RA = kint[D]; NEXT();
	CASE(LDF) RA = kflt[D]; NEXT();

	/* i64 arithmetic (wrapping on uint64_t) and logic */
	CASE(ADD) RA = RB + RC; NEXT();
	CASE(SUB) RA = RB - RC; NEXT();
	CASE(MUL) RA = RB * RC; NEXT();
	CASE(DIV) {
		int64_t b = jn_s(RB), c = jn_s(RC);
		if (c == 0 || (c == -1 && b == INT64_MIN))
			goto exit_op; /* trap: Go's step raises it */
		RA = (uint64_t)(b / c);
		NEXT();
	}
	CASE(REM) {
		int64_t b = jn_s(RB), c = jn_s(RC);
		if (c == 0 || (c == -1 && b == INT64_MIN))
			goto exit_op;
		RA = (uint64_t)(b % c);
		NEXT();
	}
	CASE(NEG) RA = (uint64_t)0 - RB; NEXT();
	CASE(AND) RA = RB & RC; NEXT();
	CASE(OR) RA = RB | RC; NEXT();
	CASE(XOR) RA = RB ^ RC; NEXT();
	CASE(SHL) RA = RB << (RC & 63u); NEXT();
	CASE(SHR) RA = RB >> (RC & 63u); NEXT();
	CASE(SAR) RA = jn_sar(RB, (unsigned)(RC & 63u)); NEXT();
	CASE(ADDI) RA = RB + (uint64_t)D; NEXT();
	CASE(SUBI) RA = RB - (uint64_t)D; NEXT();
	CASE(MULI) RA = RB * (uint64_t)D; NEXT();
	CASE(ANDI) RA = RB & (uint64_t)D; NEXT();
	CASE(SHLI) RA = RB << ((uint64_t)D & 63u); NEXT();
	CASE(SHRI) RA = RB >> ((uint64_t)D & 63u); NEXT();
	CASE(SARI) RA = jn_sar(RB, (unsigned)((uint64_t)D & 63u)); NEXT();

	/* i64 comparisons */
	CASE(EQ) RA = RB == RC; NEXT();
	CASE(NE) RA = RB != RC; NEXT();
	CASE(LT) RA = jn_s(RB) < jn_s(RC); NEXT();
	CASE(LE) RA = jn_s(RB) <= jn_s(RC); NEXT();
	CASE(GT) RA = jn_s(RB) > jn_s(RC); NEXT();
	CASE(GE) RA = jn_s(RB) >= jn_s(RC); NEXT();

	/* f64 (IEEE-754 binary64; comparisons are false on NaN) */
	CASE(FADD) RA = jn_fb(jn_f(RB) + jn_f(RC)); NEXT();
	CASE(FSUB) RA = jn_fb(jn_f(RB) - jn_f(RC)); NEXT();
	CASE(FMUL) RA = jn_fb(jn_f(RB) * jn_f(RC)); NEXT();
	CASE(FDIV) RA = jn_fb(jn_f(RB) / jn_f(RC)); NEXT();
	CASE(FNEG) RA = RB ^ ((uint64_t)1 << 63); NEXT(); /* Go's -x flips the sign bit */
	CASE(FSQRT) RA = jn_fb(sqrt(jn_f(RB))); NEXT();
	CASE(FLT) RA = jn_f(RB) < jn_f(RC); NEXT();
	CASE(FLE) RA = jn_f(RB) <= jn_f(RC); NEXT();
	CASE(FEQ) RA = jn_f(RB) == jn_f(RC); NEXT();
	CASE(ITOF) RA = jn_fb((double)jn_s(RB)); NEXT();
	CASE(FTOI) RA = jn_ftoi(jn_f(RB)); NEXT();

	/* branches: a taken backward branch (target <= its own pc) is a safe point */
	CASE(JMP) BRANCH(1);
	CASE(JZ) BRANCH(RA == 0);
	CASE(JNZ) BRANCH(RA != 0);
	CASE(JEQ) BRANCH(RA == RB);
	CASE(JNE) BRANCH(RA != RB);
	CASE(JLT) BRANCH(jn_s(RA) < jn_s(RB));
	CASE(JLE) BRANCH(jn_s(RA) <= jn_s(RB));
	CASE(JGT) BRANCH(jn_s(RA) > jn_s(RB));
	CASE(JGE) BRANCH(jn_s(RA) >= jn_s(RB));
	CASE(JEQI) BRANCH(jn_s(RA) == jn_bc(ins));
	CASE(JNEI) BRANCH(jn_s(RA) != jn_bc(ins));
	CASE(JLTI) BRANCH(jn_s(RA) < jn_bc(ins));
	CASE(JLEI) BRANCH(jn_s(RA) <= jn_bc(ins));
	CASE(JGTI) BRANCH(jn_s(RA) > jn_bc(ins));
	CASE(JGEI) BRANCH(jn_s(RA) >= jn_bc(ins));

	/* calls and returns within the program (safe points) */
	CASE(CALL) {
		int64_t nfp = fp + 1, fn = D;
		int64_t base = frames[fp].base + (int64_t)A;
		const int64_t *cf = funcs + 3 * fn;
		/* the frame stack is full (Go grows it), the depth limit (Go
		 * traps) or the register stack is too small (Go grows it) */
		if (nfp >= nframes || nfp >= maxframes || base + cf[1] > nregs)
			goto exit_op;
		frames[fp].pc = pc;
		fp = nfp;
		frames[fp].fn = fn;
		frames[fp].pc = 0;
		frames[fp].base = base;
		code = words + cf[0];
		pc = 0;
		r = regs + base;
		SAFEPOINT();
		NEXT();
	}
	CASE(RET) {
		if (fp == 0)
			goto exit_op; /* the entry function returns: Go finishes the task */
		r[0] = RA; /* the callee's r0 is the caller's window register */
		goto ret;
	}
	CASE(RETV) {
		if (fp == 0)
			goto exit_op;
	ret:
		fp--;
		code = words + funcs[3 * frames[fp].fn];
		pc = frames[fp].pc;
		r = regs + frames[fp].base;
		SAFEPOINT();
		NEXT();
	}
	CASE(TAILCALL) {
		int64_t fn = D;
		const int64_t *cf = funcs + 3 * fn;
		unsigned a = A, c = C, i;
		if (frames[fp].base + cf[1] > nregs)
			goto exit_op; /* Go grows the register stack and resumes here */
		for (i = 0; i < c; i++)
			r[i] = r[a + i];
		frames[fp].fn = fn;
		code = words + cf[0];
		pc = 0;
		SAFEPOINT();
		NEXT();
	}
#ifndef JN_GOTO
	}
#endif

exit_op: /* undo the charge: Go charges and runs the instruction */
	pc--;
	left++;
	frames[fp].pc = pc;
	io->fp = fp;
	io->left = left;
	io->exit = JN_EXIT_OP;
	return JN_EXIT_OP;

preempt:
	frames[fp].pc = pc;
	io->fp = fp;
	io->left = left;
	io->exit = JN_EXIT_PREEMPT;
	return JN_EXIT_PREEMPT;
}
