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
	OP_NHOT, /* opcodes from here on exit to Go, except: */
	OP_BLEN = 74, OP_BGET = 75, OP_BSET = 76 /* on the buffers of jn_bufs */
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

/* jn_op_name2 names the opcodes past the hot range that jn_run executes. */
const char *jn_op_name2(int op) {
	switch (op) {
	case OP_BLEN:
		return "blen";
	case OP_BGET:
		return "bget";
	case OP_BSET:
		return "bset";
	}
	return 0;
}

/* jn_hot reports whether jn_run executes opcode op (lds always exits; blen
 * bget bset run on the buffers of jn_bufs only). */
int jn_hot(int op) { return (op >= 0 && op < OP_NHOT && op != OP_LDS) || jn_op_name2(op) != 0; }

/* Signed view of a register without implementation-defined conversion. */
static inline int64_t jn_s(uint64_t u) {
	return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* Field D (bits 32..63) sign-extended, and BC (bits 16..31): the bits are
 * reinterpreted with memcpy (no implementation-defined conversion), which
 * compilers turn into one shift or move. */
static inline int64_t jn_d(uint64_t ins) {
	uint32_t u = (uint32_t)(ins >> 32);
	int32_t d;
	memcpy(&d, &u, sizeof d);
	return d;
}
static inline int64_t jn_bc(uint64_t ins) {
	uint16_t u = (uint16_t)(ins >> 16);
	int16_t d;
	memcpy(&d, &u, sizeof d);
	return d;
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

/* Superinstructions. jn_prepare rewrites the opcode byte of an instruction
 * that is followed, in the same function, by one it fuses with: the pair
 * then runs as one handler (the first's body, then the second's handler
 * entered directly, without a dispatch). The second instruction keeps its
 * own word, so a branch to it runs it alone; reductions, safe points and
 * exits are those of the two instructions run one after the other (the
 * first part never exits). Fused opcodes are >= JN_XBASE, above every
 * opcode of the ISA, so jn_run also runs words that were not prepared.
 *
 * Firsts: simple moves and i64 arithmetic; seconds: every branch, call
 * and ret. */
#define JN_FIRSTS(X) X(MOV) X(LDI) X(ADD) X(SUB) X(ADDI) X(SUBI)
#define JN_FIRST_OPS(X) X(MOVI, MOV) X(MOVF, MOV) X(MOVR, MOV) X(LDI, LDI) \
	X(ADD, ADD) X(SUB, SUB) X(ADDI, ADDI) X(SUBI, SUBI)
#define JN_SECONDS(X, f) X(f, JMP) X(f, CALL) X(f, RET) X(f, JZ) X(f, JNZ) \
	X(f, JEQ) X(f, JNE) X(f, JLT) X(f, JLE) X(f, JGT) X(f, JGE) X(f, JEQI) \
	X(f, JNEI) X(f, JLTI) X(f, JLEI) X(f, JGTI) X(f, JGEI)
/* Branches whose (forward) target is a ret: taken, the ret runs at once. */
#define JN_BRANCHES(X) X(JMP) X(JZ) X(JNZ) X(JEQ) X(JNE) X(JLT) X(JLE) X(JGT) \
	X(JGE) X(JEQI) X(JNEI) X(JLTI) X(JLEI) X(JGTI) X(JGEI)
#define JN_ENUM_F(f) F_##f,
#define JN_ENUM_R(b) R_##b,
#define JN_ENUM_S(f, s) S_##s,
enum { JN_FIRSTS(JN_ENUM_F) JN_NF };
enum { JN_SECONDS(JN_ENUM_S, _) JN_NS };
enum { JN_BRANCHES(JN_ENUM_R) JN_NR };
#define JN_XBASE 128
/* the code of the function whose table entry is at cf (loop.h: JN_XF) */
#define JN_CODE(cf) ((const uint64_t *)((const char *)(cf) - (cf)[0]))
#define JN_XOP(f, s) (JN_XBASE + (f) * JN_NS + (s))
#define JN_RBASE JN_XOP(JN_NF, 0)
#define JN_ROP(b) (JN_RBASE + (b))
typedef char jn_xfits[JN_ROP(JN_NR) <= 256 ? 1 : -1];

/* jn_prepare: see loop.h. */
void jn_prepare(uint64_t *out, const uint64_t *words, int64_t nwords, const int64_t *funcs, int64_t nfuncs,
                int64_t ncode) {
	static signed char first[256], second[256], branch[256];
	int64_t i, fn;
	memset(first, -1, sizeof first);
	memset(second, -1, sizeof second);
	memset(branch, -1, sizeof branch);
#define JN_SET_R(b) branch[OP_##b] = R_##b;
	JN_BRANCHES(JN_SET_R)
#define JN_SET_F(op, f) first[OP_##op] = F_##f;
#define JN_SET_S(f, s) second[OP_##s] = S_##s;
	JN_FIRST_OPS(JN_SET_F)
	JN_SECONDS(JN_SET_S, _)
	memcpy(out, words, (size_t)nwords * sizeof *out);
	for (fn = 0; fn < nfuncs; fn++) {
		int64_t start = funcs[3 * fn], end = fn + 1 < nfuncs ? funcs[3 * (fn + 1)] : ncode;
		int64_t at = nwords + JN_XF * fn; /* the function's entry in the table */
		out[at] = (uint64_t)(at - start) * sizeof *out; /* in bytes */
		out[at + 1] = (uint64_t)funcs[3 * fn + 1];
		for (i = start; i < end; i++) {
			int f = first[words[i] & 0xffu], b = branch[words[i] & 0xffu];
			int s = i + 1 < end ? second[words[i + 1] & 0xffu] : -1;
			if (f >= 0 && s >= 0)
				out[i] = (words[i] & ~(uint64_t)0xffu) | (uint64_t)JN_XOP(f, s);
			if (b >= 0) {
				int64_t t = start + jn_d(words[i]);
				if (t > i && t < end && (words[t] & 0xffu) == OP_RET)
					out[i] = (words[i] & ~(uint64_t)0xffu) | (uint64_t)JN_ROP(b);
			}
		}
	}
}

/* The table of a call without buffers. */
static const jn_bufs jn_nobufs;

/* The slot of buffer h in t, or 0. */
static inline const jn_buf *jn_find(const jn_bufs *t, uint64_t h) {
	int64_t i, n = t->n;
	for (i = 0; i < n; i++)
		if (t->b[i].h == h)
			return &t->b[i];
	return 0;
}

#if defined(__GNUC__)
#define JN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define JN_UNLIKELY(x) (x)
#endif
#if defined(__GNUC__) && !defined(JN_NO_GOTO) /* JN_NO_GOTO: test the switch */
#define JN_GOTO 1
#define JN_STOPPED() (__atomic_load_n(stop, __ATOMIC_ACQUIRE) != 0)
#else
#define JN_STOPPED() (*(volatile const uint32_t *)stop != 0)
#endif

/* GCC's cross-jumping merges the replicated dispatch jumps of the
 * threaded handlers into about 6 shared ones, which defeats the point of
 * threaded dispatch (per-handler branch prediction). The command-line fix
 * (-fno-crossjumping) is not in cgo's flag allow-list, so the function
 * asks for it itself; other compilers ignore nothing they need here. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-crossjumping")))
#endif
int64_t jn_run(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *prog, const uint32_t *stop,
               const jn_bufs *bufs) {
	int64_t left = io->left;
	const int64_t nregs = io->nregs;
	/* a call from a frame at or past flast exits: the frame stack is full
	 * or the depth limit is reached */
	int64_t flim = io->nframes < io->maxframes ? io->nframes : io->maxframes;
	const jn_frame *const flast = frames + (flim > 1 ? flim - 1 : 0);
	const uint64_t *const kint = prog + io->kint;
	const uint64_t *const kflt = prog + io->kflt;
	/* the function table: JN_XF words per function, {distance back from
	 * the entry to the function's code, nregs} */
	const uint64_t *const xf = prog + io->xfuncs;
	jn_frame *f = frames + io->fp; /* the current frame */
	if (!bufs)
		bufs = &jn_nobufs;
	const uint64_t *code = JN_CODE(xf + JN_XF * f->fn);
	int64_t pc = f->pc;
	int64_t base = f->base;
	uint64_t *r = regs + base;
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
		if (JN_UNLIKELY(left <= 0 || JN_STOPPED())) \
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

/* The bodies of the control transfers, instantiated alone and as the
 * second half of superinstructions (each copy has its own dispatch). */
#define IF_JMP 1
#define IF_JZ (RA == 0)
#define IF_JNZ (RA != 0)
#define IF_JEQ (RA == RB)
#define IF_JNE (RA != RB)
#define IF_JLT (jn_s(RA) < jn_s(RB))
#define IF_JLE (jn_s(RA) <= jn_s(RB))
#define IF_JGT (jn_s(RA) > jn_s(RB))
#define IF_JGE (jn_s(RA) >= jn_s(RB))
#define IF_JEQI (jn_s(RA) == jn_bc(ins))
#define IF_JNEI (jn_s(RA) != jn_bc(ins))
#define IF_JLTI (jn_s(RA) < jn_bc(ins))
#define IF_JLEI (jn_s(RA) <= jn_bc(ins))
#define IF_JGTI (jn_s(RA) > jn_bc(ins))
#define IF_JGEI (jn_s(RA) >= jn_bc(ins))
#define DO_JMP BRANCH(IF_JMP)
#define DO_JZ BRANCH(IF_JZ)
#define DO_JNZ BRANCH(IF_JNZ)
#define DO_JEQ BRANCH(IF_JEQ)
#define DO_JNE BRANCH(IF_JNE)
#define DO_JLT BRANCH(IF_JLT)
#define DO_JLE BRANCH(IF_JLE)
#define DO_JGT BRANCH(IF_JGT)
#define DO_JGE BRANCH(IF_JGE)
#define DO_JEQI BRANCH(IF_JEQI)
#define DO_JNEI BRANCH(IF_JNEI)
#define DO_JLTI BRANCH(IF_JLTI)
#define DO_JLEI BRANCH(IF_JLEI)
#define DO_JGTI BRANCH(IF_JGTI)
#define DO_JGEI BRANCH(IF_JGEI)
/* call: the frame stack is full (Go grows it), the depth limit (Go traps)
 * or the register stack is too small (Go grows it) exit */
#define DO_CALL                                    \
	do {                                           \
		int64_t fn_ = D;                           \
		int64_t nbase_ = base + (int64_t)A;        \
		const uint64_t *cf_ = xf + JN_XF * fn_;    \
		if (JN_UNLIKELY(f >= flast || nbase_ + jn_s(cf_[1]) > nregs)) \
			goto exit_op;                          \
		f->pc = pc;                                \
		f++;                                       \
		f->fn = fn_;                               \
		f->base = nbase_;                          \
		base = nbase_;                             \
		code = JN_CODE(cf_);                       \
		pc = 0;                                    \
		r += A;                                    \
		SAFEPOINT();                               \
		NEXT();                                    \
	} while (0)
/* ret of the entry function exits: Go finishes the task */
#define DO_RETV_TAIL                               \
	do {                                           \
		f--;                                       \
		code = JN_CODE(xf + JN_XF * f->fn);        \
		pc = f->pc;                                \
		base = f->base;                            \
		r = regs + base;                           \
		SAFEPOINT();                               \
		NEXT();                                    \
	} while (0)
#define DO_RET                                     \
	do {                                           \
		if (JN_UNLIKELY(f == frames))              \
			goto exit_op;                          \
		r[0] = RA; /* the callee's r0 is the caller's window register */ \
		DO_RETV_TAIL;                              \
	} while (0)
#define DO_RETV                                    \
	do {                                           \
		if (JN_UNLIKELY(f == frames))              \
			goto exit_op;                          \
		DO_RETV_TAIL;                              \
	} while (0)

#ifdef JN_GOTO
	static void *const tab[256] = {
		[OP_LDS] = &&exit_cold, [OP_NHOT ... OP_BLEN - 1] = &&exit_cold,
		[OP_BSET + 1 ... JN_XBASE - 1] = &&exit_cold,
		[JN_ROP(JN_NR) ... 255] = &&exit_cold,
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
		[OP_TAILCALL] = &&L_TAILCALL, [OP_BLEN] = &&L_BLEN, [OP_BGET] = &&L_BGET,
		[OP_BSET] = &&L_BSET,
#define JN_TAB_X(f, s) [JN_XOP(F_##f, S_##s)] = &&L_##f##_##s,
#define JN_TAB_ROW(f) JN_SECONDS(JN_TAB_X, f)
		JN_FIRSTS(JN_TAB_ROW)
#define JN_TAB_R(b) [JN_ROP(R_##b)] = &&L_R_##b,
		JN_BRANCHES(JN_TAB_R)
	};
/* Threaded dispatch: every handler ends with its own indirect jump. Each
 * handler charges its instructions as it starts (a superinstruction 2). */
#define NEXT()                                     \
	do {                                           \
		ins = code[pc++];                          \
		goto *tab[ins & 0xffu];                    \
	} while (0)
#define CASE(op) L_##op: left--;
#define XCASE(f, s) L_##f##_##s: left -= 2;
#define RCASE(b) L_R_##b: left--;
	NEXT();
#else
#define NEXT() goto dispatch
#define CASE(op) case OP_##op: left--;
#define XCASE(f, s) case JN_XOP(F_##f, S_##s): left -= 2;
#define RCASE(b) case JN_ROP(R_##b): left--;
dispatch:
	ins = code[pc++];
	switch (ins & 0xffu) {
	default:
		goto exit_cold;
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
	CASE(JMP) DO_JMP;
	CASE(JZ) DO_JZ;
	CASE(JNZ) DO_JNZ;
	CASE(JEQ) DO_JEQ;
	CASE(JNE) DO_JNE;
	CASE(JLT) DO_JLT;
	CASE(JLE) DO_JLE;
	CASE(JGT) DO_JGT;
	CASE(JGE) DO_JGE;
	CASE(JEQI) DO_JEQI;
	CASE(JNEI) DO_JNEI;
	CASE(JLTI) DO_JLTI;
	CASE(JLEI) DO_JLEI;
	CASE(JGTI) DO_JGTI;
	CASE(JGEI) DO_JGEI;

	/* calls and returns within the program (safe points) */
	CASE(CALL) DO_CALL;
	CASE(RET) DO_RET;
	CASE(RETV) DO_RETV;
	CASE(TAILCALL) {
		int64_t fn = D;
		const uint64_t *cf = xf + JN_XF * fn;
		unsigned a = A, c = C, i;
		if (JN_UNLIKELY(base + jn_s(cf[1]) > nregs))
			goto exit_op; /* Go grows the register stack and resumes here */
		for (i = 0; i < c; i++)
			r[i] = r[a + i];
		f->fn = fn;
		code = JN_CODE(cf);
		pc = 0;
		SAFEPOINT();
		NEXT();
	}
	/* byte buffers: only those in the table (loop.h), else Go runs the
	 * instruction (it adds the buffer, or traps) */
	CASE(BLEN) {
		const jn_buf *b = jn_find(bufs, RB);
		if (!b)
			goto exit_op;
		RA = (uint64_t)b->n;
		NEXT();
	}
	CASE(BGET) {
		const jn_buf *b = jn_find(bufs, RB);
		uint64_t i = RC;
		if (!b || i >= (uint64_t)b->n)
			goto exit_op;
		RA = b->p[i];
		NEXT();
	}
	CASE(BSET) {
		const jn_buf *b = jn_find(bufs, RA);
		uint64_t i = RB;
		if (!b || i >= (uint64_t)b->n)
			goto exit_op;
		b->p[i] = (uint8_t)RC;
		NEXT();
	}

	/* forward branches to a ret (jn_prepare): taken, the ret is charged
	 * and run at once */
#define JN_BRANCH_R(b)                             \
	RCASE(b) {                                     \
		if (IF_##b) {                              \
			pc = D;                                \
			ins = code[pc++];                      \
			left--;                                \
			DO_RET;                                \
		}                                          \
		NEXT();                                    \
	}
	JN_BRANCHES(JN_BRANCH_R)

	/* superinstructions (jn_prepare) */
#define DO_MOV RA = RB
#define DO_LDI RA = (uint64_t)D
#define DO_ADD RA = RB + RC
#define DO_SUB RA = RB - RC
#define DO_ADDI RA = RB + (uint64_t)D
#define DO_SUBI RA = RB - (uint64_t)D
#define JN_PAIR(f, s)                              \
	XCASE(f, s) {                                  \
		DO_##f;                                    \
		ins = code[pc++];                          \
		DO_##s;                                    \
	}
#define JN_PAIR_ROW(f) JN_SECONDS(JN_PAIR, f)
	JN_FIRSTS(JN_PAIR_ROW)
#ifndef JN_GOTO
	}
#endif

exit_op: /* undo the charge: Go charges and runs the instruction */
	left++;
exit_cold: /* an instruction outside the hot subset (not charged) */
	pc--;
	f->pc = pc;
	io->fp = f - frames;
	io->left = left;
	io->exit = JN_EXIT_OP;
	return JN_EXIT_OP;

preempt:
	f->pc = pc;
	io->fp = f - frames;
	io->left = left;
	io->exit = JN_EXIT_PREEMPT;
	return JN_EXIT_PREEMPT;
}
