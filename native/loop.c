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
	OP_BLEN = 74, OP_BGET = 75, OP_BSET = 76, /* on the buffers of jn_bufs */
	/* ABI 1.3, on the buffers of jn_bufs within one chunk (jn_bytes.h) */
	OP_BFINDR = 104, OP_BCMP = 105, OP_BCASECMP = 106, OP_BTOI = 107, OP_ITOB = 109
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
	case OP_BFINDR:
		return "bfindr";
	case OP_BCMP:
		return "bcmp";
	case OP_BCASECMP:
		return "bcasecmp";
	case OP_BTOI:
		return "btoi";
	case OP_ITOB:
		return "itob";
	}
	return 0;
}

/* jn_hot reports whether jn_run executes opcode op (lds always exits; blen
 * bget bset bfindr bcmp bcasecmp btoi itob run on the buffers of jn_bufs
 * only). */
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

/* Handlers. jn_prepare gives every instruction a handler (loop.h: the
 * prepared program holds, per instruction, a handler word and an operand
 * word; jn_run dispatches by jumping to the address in the handler word).
 * A handler is one hot opcode, or a superinstruction: instructions that
 * follow each other in one function, or a jmp and its target, run as one
 * handler (the parts one after the other, without a dispatch between
 * them). The later parts keep their own handler words, so a branch to one
 * runs it alone. Every part is charged as it starts and can exit or
 * preempt exactly as when run alone, so reductions, safe points and exit
 * pcs are those of the instructions run one by one.
 *
 *   - singles: every opcode jn_run executes, and callx: a call whose
 *     operand word holds the offset of the callee's code instead of its
 *     function index (every call, unless the prepared program is too big);
 *   - pairs: a first (mov*, ldi, add, sub, addi, subi, bget) followed by a
 *     second (every branch, callx, ret);
 *   - R forms: a branch whose forward target is a ret runs that ret at once
 *     when taken;
 *   - JC forms: a jmp whose target is a conditional branch (a loop's back
 *     edge to its test) runs that branch at once, after the jmp's safe
 *     point, alone or after an add, sub, addi or subi (the loop step);
 *   - FAR branches: the branches of a function too long for the encoding
 *     of branch targets (JN_MAXLEN), which has only singles. */
#define JN_OPS(X) X(NOP) X(MOVI) X(MOVF) X(MOVR) X(LDI) X(LDK) X(LDF) X(ADD) X(SUB) X(MUL) X(DIV) \
	X(REM) X(NEG) X(AND) X(OR) X(XOR) X(SHL) X(SHR) X(SAR) X(ADDI) X(SUBI) X(MULI) X(ANDI) X(SHLI) \
	X(SHRI) X(SARI) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(FADD) X(FSUB) X(FMUL) X(FDIV) X(FNEG) \
	X(FSQRT) X(FLT) X(FLE) X(FEQ) X(ITOF) X(FTOI) X(JMP) X(JZ) X(JNZ) X(JEQ) X(JNE) X(JLT) X(JLE) \
	X(JGT) X(JGE) X(JEQI) X(JNEI) X(JLTI) X(JLEI) X(JGTI) X(JGEI) X(CALL) X(RET) X(RETV) \
	X(TAILCALL) X(BLEN) X(BGET) X(BSET) X(BFINDR) X(BCMP) X(BCASECMP) X(BTOI) X(ITOB)
#define JN_CONDS(X) X(JZ) X(JNZ) X(JEQ) X(JNE) X(JLT) X(JLE) X(JGT) X(JGE) X(JEQI) X(JNEI) X(JLTI) \
	X(JLEI) X(JGTI) X(JGEI)
#define JN_BRANCHES(X) X(JMP) JN_CONDS(X)
#define JN_FIRSTS(X) X(MOV) X(LDI) X(ADD) X(SUB) X(ADDI) X(SUBI) X(BGET)
#define JN_FIRST_OPS(X) X(MOVI, MOV) X(MOVF, MOV) X(MOVR, MOV) X(LDI, LDI) \
	X(ADD, ADD) X(SUB, SUB) X(ADDI, ADDI) X(SUBI, SUBI) X(BGET, BGET)
/* firsts that also fuse with a jmp to a conditional branch (loop steps) */
#define JN_LFIRSTS(X) X(ADD) X(SUB) X(ADDI) X(SUBI)
#define JN_SECONDS(X, f) X(f, JMP) X(f, CALLX) X(f, RET) X(f, JZ) X(f, JNZ) \
	X(f, JEQ) X(f, JNE) X(f, JLT) X(f, JLE) X(f, JGT) X(f, JGE) X(f, JEQI) \
	X(f, JNEI) X(f, JLTI) X(f, JLEI) X(f, JGTI) X(f, JGEI)

#define JN_ENUM_F(f) F_##f,
#define JN_ENUM_S(f, s) S_##s,
#define JN_ENUM_L(f) L_##f,
#define JN_ENUM_C(c) C_##c,
enum { JN_FIRSTS(JN_ENUM_F) JN_NF };
enum { JN_SECONDS(JN_ENUM_S, _) JN_NS };
enum { JN_LFIRSTS(JN_ENUM_L) JN_NL };
enum { JN_CONDS(JN_ENUM_C) JN_NC };

/* The handler numbers (jn_prepare) */
#define JN_H_OP(op) H_##op,
#define JN_H_R(b) H_R_##b,
#define JN_H_FAR(b) H_FAR_##b,
#define JN_H_X(f, s) H_##f##_##s,
#define JN_H_ROW(f) JN_SECONDS(JN_H_X, f)
#define JN_H_JC(c) H_JC_##c,
#define JN_H_LJC(f, c) H_##f##_JC_##c,
#define JN_LJC_ROW(X, f) X(f, JZ) X(f, JNZ) X(f, JEQ) X(f, JNE) X(f, JLT) X(f, JLE) X(f, JGT) \
	X(f, JGE) X(f, JEQI) X(f, JNEI) X(f, JLTI) X(f, JLEI) X(f, JGTI) X(f, JGEI)
#define JN_H_LROW(f) JN_LJC_ROW(JN_H_LJC, f)
enum {
	H_COLD, /* an instruction jn_run does not execute: exits */
	JN_OPS(JN_H_OP)
	H_CALLX,
	JN_BRANCHES(JN_H_R)
	JN_BRANCHES(JN_H_FAR)
	JN_FIRSTS(JN_H_ROW)
	JN_CONDS(JN_H_JC)
	JN_LFIRSTS(JN_H_LROW)
	H_N
};
#define H_R0 H_R_JMP
#define H_FAR0 H_FAR_JMP
#define JN_HX(f, s) (H_MOV_JMP + (f) * JN_NS + (s))
#define JN_HJC(c) (H_JC_JZ + (c))
#define JN_HLJC(l, c) (H_ADD_JC_JZ + (l) * JN_NC + (c))
typedef char jn_xrows[JN_HX(JN_NF, 0) == H_JC_JZ && JN_HLJC(JN_NL, 0) == H_N ? 1 : -1];

#if defined(__GNUC__) && !defined(JN_NO_GOTO) /* JN_NO_GOTO: test the switch */
#define JN_GOTO 1
#endif

/* Layout of the prepared program (loop.h). */
#define JN_HDR 4 /* {kint, kflt, function table, 0} */
/* The longest function whose branches hold 16 * (target pc + 1) in their
 * signed 32-bit field D (JN_TGT); a longer one keeps its target pcs, runs
 * them with the FAR branch handlers and has no superinstructions. (A test
 * can set it lower: the differential tests pass with -DJN_MAXLEN=3.) */
#ifndef JN_MAXLEN
#define JN_MAXLEN (INT32_MAX / 16 - 1)
#endif

static int64_t jn_exec(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *prog, const uint32_t *stop,
                       const jn_bufs *bufs, void *const **tabp);

/* The condition (C_*) of the conditional branch that the jmp at i (in the
 * function of code [start, end)) jumps to, or -1. */
static int jn_jcond(const uint64_t *words, int64_t start, int64_t end, int64_t i) {
	int64_t t = start + jn_d(words[i]);
	unsigned op;
	if (t < start || t >= end)
		return -1;
	op = (unsigned)(words[t] & 0xffu);
	return op >= OP_JZ && op <= OP_JGEI ? (int)(op - OP_JZ) : -1;
}

/* jn_prep_size: see loop.h. */
int64_t jn_prep_size(int64_t nwords, int64_t ncode, int64_t nfuncs) {
	return JN_HDR + 3 * nfuncs + 2 * ncode + (nwords - ncode);
}

/* jn_prepare: see loop.h. */
void jn_prepare(uint64_t *out, const uint64_t *words, int64_t nwords, const int64_t *funcs, int64_t nfuncs,
                int64_t ncode, int64_t kflt) {
	signed char first[256], second[256], lfirst[256];
	short single[256];
	int64_t i, fn, n = jn_prep_size(nwords, ncode, nfuncs);
	int64_t pools = JN_HDR + 2 * nfuncs + 2 * ncode, xf = pools + (nwords - ncode);
	int callx = n <= (int64_t)UINT32_MAX; /* callee offsets fit the operand word */
#ifdef JN_GOTO
	void *const *tab;
	jn_exec(0, 0, 0, 0, 0, 0, &tab);
#define JN_HWORD(h) ((uint64_t)(uintptr_t)tab[h])
#else
#define JN_HWORD(h) ((uint64_t)(h))
#endif
	memset(first, -1, sizeof first);
	memset(second, -1, sizeof second);
	memset(lfirst, -1, sizeof lfirst);
	for (i = 0; i < 256; i++)
		single[i] = H_COLD;
#define JN_SET_OP(op) single[OP_##op] = H_##op;
	JN_OPS(JN_SET_OP)
#define JN_SET_F(op, f) first[OP_##op] = F_##f;
	JN_FIRST_OPS(JN_SET_F)
#define JN_SET_S(f, s) second[OP_##s] = S_##s;
#define OP_CALLX OP_CALL
	JN_SECONDS(JN_SET_S, _)
#define JN_SET_L(f) lfirst[OP_##f] = L_##f;
	JN_LFIRSTS(JN_SET_L)
	if (!callx)
		second[OP_CALL] = -1;
	out[0] = (uint64_t)pools; /* the pools start with kint */
	out[1] = (uint64_t)(pools + (kflt - ncode));
	out[2] = (uint64_t)xf;
	out[3] = 0;
	/* the function table and the code offsets, first (calls need them) */
	for (fn = 0; fn < nfuncs; fn++)
		out[xf + fn] = (uint64_t)(JN_HDR + 2 * fn + 2 + 2 * funcs[3 * fn]);
	for (fn = 0; fn < nfuncs; fn++) {
		int64_t start = funcs[3 * fn], end = fn + 1 < nfuncs ? funcs[3 * (fn + 1)] : ncode;
		uint64_t *code = out + out[xf + fn];
		/* a function too long for JN_TGT: its branches have handlers of
		 * their own (FAR), and it has no superinstructions */
		int far = end - start > JN_MAXLEN;
		code[-2] = (uint64_t)fn;
		code[-1] = (uint64_t)funcs[3 * fn + 1];
		for (i = start; i < end; i++) {
			uint64_t w = words[i];
			unsigned op = (unsigned)(w & 0xffu);
			int h = single[op];
			int f = first[op];
			int64_t k = i - start;
			if (op == OP_CALL && callx) {
				/* callx: the callee's code offset replaces its index */
				h = H_CALLX;
				w = (w & 0xffffffffu) | out[xf + jn_d(w)] << 32;
			}
			if (op == OP_JMP && jn_jcond(words, start, end, i) >= 0)
				h = JN_HJC(jn_jcond(words, start, end, i));
			if (f >= 0 && i + 1 < end) {
				unsigned op2 = (unsigned)(words[i + 1] & 0xffu);
				int c = op2 == OP_JMP ? jn_jcond(words, start, end, i + 1) : -1;
				if (c >= 0 && lfirst[op] >= 0)
					h = JN_HLJC(lfirst[op], c);
				else if (second[op2] >= 0)
					h = JN_HX(f, second[op2]);
			}
			if (op >= OP_JMP && op <= OP_JGEI) {
				int64_t t = start + jn_d(w);
				if (t > i && t < end && (words[t] & 0xffu) == OP_RET)
					h = H_R0 + (int)(op - OP_JMP);
				/* 16 * (target + 1): see JN_TGT */
				if (!far)
					w = (w & 0xffffffffu) | (uint64_t)(uint32_t)(uint64_t)(16 * (t - start) + 16) << 32;
			}
			if (far) /* singles only; branches keep their target pc */
				h = op >= OP_JMP && op <= OP_JGEI ? H_FAR0 + (int)(op - OP_JMP)
				    : op == OP_CALL && callx ? H_CALLX : single[op];
			code[2 * k] = JN_HWORD(h);
			code[2 * k + 1] = w;
		}
	}
	memcpy(out + pools, words + ncode, (size_t)(nwords - ncode) * sizeof *out);
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

#include "jn_bytes.h"

#if defined(__GNUC__)
#define JN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define JN_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define JN_UNLIKELY(x) (x)
#define JN_LIKELY(x) (x)
#endif
#if defined(__GNUC__)
#define JN_STOPPED() (__atomic_load_n(stop, __ATOMIC_ACQUIRE) != 0)
#else
#define JN_STOPPED() (*(volatile const uint32_t *)stop != 0)
#endif

int64_t jn_run(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *prog, const uint32_t *stop,
               const jn_bufs *bufs) {
	return jn_exec(io, regs, frames, prog, stop, bufs, 0);
}

/* jn_exec is jn_run; with tabp set it only stores there the address of
 * its table of handler addresses (for jn_prepare) and returns.
 *
 * The addresses of its labels are kept in prepared programs, so it must
 * be neither inlined nor cloned (the copy's labels would have other
 * addresses). GCC's cross-jumping merges the replicated dispatch jumps of
 * the threaded handlers into about 6 shared ones, which defeats the point
 * of threaded dispatch (per-handler branch prediction). The command-line
 * fix (-fno-crossjumping) is not in cgo's flag allow-list, so the function
 * asks for it itself. */
#if defined(__clang__)
__attribute__((noinline))
#elif defined(__GNUC__)
__attribute__((noinline, noclone, optimize("no-crossjumping")))
#endif
static int64_t jn_exec(jn_io *io, uint64_t *regs, jn_frame *frames, const uint64_t *prog, const uint32_t *stop,
                       const jn_bufs *bufs, void *const **tabp) {
#ifdef JN_GOTO
#define JN_TAB_OP(op) [H_##op] = &&L_##op,
#define JN_TAB_R(b) [H_R_##b] = &&L_R_##b,
#define JN_TAB_FAR(b) [H_FAR_##b] = &&L_FAR_##b,
#define JN_TAB_X(f, s) [H_##f##_##s] = &&L_##f##_##s,
#define JN_TAB_ROW(f) JN_SECONDS(JN_TAB_X, f)
	static void *const tab[H_N] = {
		[H_COLD] = &&exit_cold,
		JN_OPS(JN_TAB_OP)
		[H_CALLX] = &&L_CALLX,
		JN_BRANCHES(JN_TAB_R)
		JN_BRANCHES(JN_TAB_FAR)
		JN_FIRSTS(JN_TAB_ROW)
#define JN_TAB_JC(c) [H_JC_##c] = &&L_JC_##c,
#define JN_TAB_LJC(f, c) [H_##f##_JC_##c] = &&L_##f##_JC_##c,
#define JN_TAB_LROW(f) JN_LJC_ROW(JN_TAB_LJC, f)
		JN_CONDS(JN_TAB_JC)
		JN_LFIRSTS(JN_TAB_LROW)
	};
	if (tabp) {
		*tabp = tab;
		return 0;
	}
#else
	(void)tabp;
#endif
	int64_t left = io->left;
	const int64_t nregs = io->nregs;
	/* a call from a frame at or past flast exits: the frame stack is full
	 * or the depth limit is reached */
	int64_t flim = io->nframes < io->maxframes ? io->nframes : io->maxframes;
	const jn_frame *const flast = frames + (flim > 1 ? flim - 1 : 0);
	const uint64_t *const kint = prog + prog[0];
	const uint64_t *const kflt = prog + prog[1];
	const uint64_t *const xf = prog + prog[2]; /* code offset of each function */
	jn_frame *f = frames + io->fp; /* the current frame */
	if (!bufs)
		bufs = &jn_nobufs;
	/* code: the current function's first instruction; pc: the offset in
	 * bytes from code of the next one to run (16 * its pc: 2 words per
	 * instruction), so that dispatch and a taken branch need no shift or
	 * add on the chain from one instruction to the next; r: the current
	 * register window */
	const uint64_t *code = prog + xf[f->fn];
	int64_t pc = f->pc * 16;
	uint64_t *r = regs + f->base;
	uint64_t ins;
/* the slot at offset o (bytes) from code */
#define JN_AT(o) ((const uint64_t *)(const void *)((const char *)code + (o)))

#define A ((unsigned)(ins >> 8) & 0xffu)
#define B ((unsigned)(ins >> 16) & 0xffu)
#define C ((unsigned)(ins >> 24) & 0xffu)
#define D jn_d(ins)
/* a taken branch's new pc (bytes): its operand word holds 16 * (target +
 * 1), pc once the target's slot is dispatched (jn_prepare), so that the
 * dispatch after the branch loads from D - 16 + code (an addressing mode)
 * and the next pc is D, with no add on the way */
#define JN_TGT (D - 16)
#define JN_D0 ((unsigned)(ins >> 32) & 0xffu)
#define JN_D1 ((unsigned)(ins >> 40) & 0xffu)
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
#define BRANCH(cond) BRANCH_TO(cond, JN_TGT)
#define BRANCH_TO(cond, tgt)                       \
	do {                                           \
		if (cond) {                                \
			int64_t t_ = (tgt);                    \
			int back_ = t_ < pc;                   \
			pc = t_;                               \
			if (back_)                             \
				SAFEPOINT();                       \
		}                                          \
		NEXT();                                    \
	} while (0)

/* The bodies of the control transfers, instantiated alone and as the
 * later part of superinstructions (each copy has its own dispatch). */
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
/* call the function whose code starts at nc: the frame stack is full (Go
 * grows it), the depth limit (Go traps) or the register stack is too small
 * (Go grows it) exit. The caller's frame keeps, in place of its function
 * index, ~(offset of its code in prog) (negative) and, in place of its
 * return pc, 16 * that pc (the pc register), which ret uses directly;
 * every exit puts the index and the pc back (out:). The callee's fn is
 * written at the exit or at its own call. */
#define DO_CALL_TO(nc)                             \
	do {                                           \
		const uint64_t *c_ = (nc);                 \
		uint64_t *nr_ = r + A;                     \
		if (JN_UNLIKELY(f >= flast || (nr_ - regs) + (int64_t)c_[-1] > nregs)) \
			goto exit_op;                          \
		f->fn = ~(int64_t)(code - prog);           \
		f->pc = pc;                                \
		f++;                                       \
		f->base = nr_ - regs;                      \
		code = c_;                                 \
		pc = 0;                                    \
		r = nr_;                                   \
		SAFEPOINT();                               \
		NEXT();                                    \
	} while (0)
#define DO_CALL DO_CALL_TO(prog + xf[D])
#define DO_CALLX DO_CALL_TO(prog + (ins >> 32))
/* ret of the entry function exits: Go finishes the task. A caller's
 * frame from Go (fn an index) holds its pc as Go does. */
#define DO_RETV_TAIL                               \
	do {                                           \
		int64_t x_;                                \
		f--;                                       \
		x_ = f->fn;                                \
		if (JN_LIKELY(x_ < 0)) {                   \
			code = prog + ~x_;                     \
			pc = f->pc;                            \
		} else {                                   \
			code = prog + xf[x_];                  \
			pc = f->pc * 16;                       \
		}                                          \
		r = regs + f->base;                        \
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
/* the next part of a superinstruction */
#define STEP()                                     \
	do {                                           \
		ins = JN_AT(pc)[1];                        \
		pc += 16;                                  \
	} while (0)

#ifdef JN_GOTO
/* Threaded dispatch: every handler ends with its own indirect jump to the
 * address in the next instruction's handler word. Each handler charges
 * its first instruction as it starts. */
#define NEXT()                                     \
	do {                                           \
		const uint64_t *p_ = JN_AT(pc);            \
		ins = p_[1];                               \
		pc += 16;                                  \
		goto *(void *)(uintptr_t)p_[0];            \
	} while (0)
#define HANDLER(h) L_##h:
	NEXT();
#else
#define NEXT() goto dispatch
#define HANDLER(h) case H_##h:
dispatch: {
	uint64_t h_ = JN_AT(pc)[0];
	ins = JN_AT(pc)[1];
	pc += 16;
	switch (h_) {
	default:
		goto exit_cold;
#endif
#define CASE(op) HANDLER(op) left--;

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
	CASE(CALLX) DO_CALLX;
	CASE(RET) DO_RET;
	CASE(RETV) DO_RETV;
	CASE(TAILCALL) {
		const uint64_t *c_ = prog + xf[D];
		unsigned a = A, n = C, i;
		if (JN_UNLIKELY((r - regs) + (int64_t)c_[-1] > nregs))
			goto exit_op; /* Go grows the register stack and resumes here */
		for (i = 0; i < n; i++)
			r[i] = r[a + i];
		code = c_;
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
	/* the bounded primitives of ABI 1.3 (jn_bytes.h): on the buffers of
	 * the table and within one chunk; anything else (another handle, a
	 * range out of bounds, a longer range, a long needle) runs in Go */
	CASE(BFINDR) {
		int64_t res;
		int64_t c = jn_bfindr(jn_find(bufs, RB), jn_find(bufs, RC), r[JN_D0], r[JN_D1], &res);
		if (c < 0)
			goto exit_op;
		left -= c;
		RA = (uint64_t)res;
		NEXT();
	}
	CASE(BCMP) {
		int64_t res;
		int64_t c = jn_bcmp(jn_find(bufs, RB), jn_find(bufs, r[JN_D1]), RC, r[JN_D0], 0, &res);
		if (c < 0)
			goto exit_op;
		left -= c;
		RA = (uint64_t)res;
		NEXT();
	}
	CASE(BCASECMP) {
		int64_t res;
		int64_t c = jn_bcmp(jn_find(bufs, RB), jn_find(bufs, r[JN_D1]), RC, r[JN_D0], 1, &res);
		if (c < 0)
			goto exit_op;
		left -= c;
		RA = (uint64_t)res;
		NEXT();
	}
	CASE(BTOI) {
		uint64_t v, end;
		int64_t c = jn_btoi(jn_find(bufs, RB), RC, r[JN_D0], &v, &end);
		if (c < 0)
			goto exit_op;
		left -= c;
		RA = v; /* then the end offset: it wins when both name one register */
		r[JN_D1] = end;
		NEXT();
	}
	CASE(ITOB) {
		uint64_t next;
		if (!jn_itob(jn_find(bufs, RB), RC, r[JN_D0], &next))
			goto exit_op;
		RA = next;
		NEXT();
	}

	/* forward branches to a ret: taken, the ret is charged and run at once */
#define JN_BRANCH_R(b)                             \
	HANDLER(R_##b) {                               \
		left--;                                    \
		if (IF_##b) {                              \
			pc = JN_TGT;                           \
			STEP();                                \
			left--;                                \
			DO_RET;                                \
		}                                          \
		NEXT();                                    \
	}
	JN_BRANCHES(JN_BRANCH_R)

	/* the branches of a function too long for JN_TGT: the operand word
	 * holds the target pc itself */
#define JN_BRANCH_FAR(b)                           \
	HANDLER(FAR_##b) {                             \
		left--;                                    \
		BRANCH_TO(IF_##b, 16 * D);                 \
	}
	JN_BRANCHES(JN_BRANCH_FAR)

	/* pairs */
#define DO_MOV RA = RB
#define DO_LDI RA = (uint64_t)D
#define DO_ADD RA = RB + RC
#define DO_SUB RA = RB - RC
#define DO_ADDI RA = RB + (uint64_t)D
#define DO_SUBI RA = RB - (uint64_t)D
#define DO_BGET                                    \
	do {                                           \
		const jn_buf *b_ = jn_find(bufs, RB);      \
		uint64_t i_ = RC;                          \
		if (!b_ || i_ >= (uint64_t)b_->n)          \
			goto exit_op;                          \
		RA = b_->p[i_];                            \
	} while (0)
#define JN_PAIR(f, s)                              \
	HANDLER(f##_##s) {                             \
		left--;                                    \
		DO_##f;                                    \
		STEP();                                    \
		left--;                                    \
		DO_##s;                                    \
	}
#define JN_PAIR_ROW(f) JN_SECONDS(JN_PAIR, f)
	JN_FIRSTS(JN_PAIR_ROW)

	/* a jmp to a conditional branch (a loop's back edge to its test), alone
	 * or after an i64 add/sub: the branch at the target is charged and run
	 * at once (after the jmp's safe point) */
#define JC_BODY(c)                                 \
	do {                                           \
		int64_t t_ = JN_TGT;                       \
		int back_ = t_ < pc;                       \
		pc = t_;                                   \
		if (back_)                                 \
			SAFEPOINT();                           \
		STEP();                                    \
		left--;                                    \
		DO_##c;                                    \
	} while (0)
#define JN_JC(c)                                   \
	HANDLER(JC_##c) {                              \
		left--;                                    \
		JC_BODY(c);                                \
	}
	JN_CONDS(JN_JC)
#define JN_LJC(f, c)                               \
	HANDLER(f##_JC_##c) {                          \
		left--;                                    \
		DO_##f;                                    \
		STEP();                                    \
		left--;                                    \
		JC_BODY(c);                                \
	}
#define JN_LJC_HROW(f) JN_LJC_ROW(JN_LJC, f)
	JN_LFIRSTS(JN_LJC_HROW)
#ifndef JN_GOTO
	}
	}
#endif

	{
		int64_t i, x;
	exit_op: /* undo the charge: Go charges and runs the instruction */
		left++;
	exit_cold: /* an instruction outside the hot subset (not charged) */
		pc -= 16;
		io->exit = JN_EXIT_OP;
		goto out;
	preempt:
		io->exit = JN_EXIT_PREEMPT;
	out:
		/* the frames in Go's form: the function index and pc of the
		 * current frame, and of every caller that a call here rewrote
		 * (they are just below it, and the frames below them were not) */
		f->pc = pc >> 4;
		f->fn = (int64_t)code[-2];
		for (i = f - frames; i-- > 0 && (x = frames[i].fn) < 0;) {
			frames[i].fn = (int64_t)prog[~x - 2];
			frames[i].pc >>= 4;
		}
		io->fp = f - frames;
		io->left = left;
		return io->exit;
	}
}
