/* A standalone driver for loop.c under AddressSanitizer and
 * UndefinedBehaviorSanitizer (no Go involved): it runs hand-encoded
 * programs through jn_run with small and large budgets and checks results,
 * exits and exit pcs. Build and run (gcc or clang):
 *
 *   cc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
 *      -I native native/loop.c native/sanitize/driver.c -lm -o /tmp/jn_san && /tmp/jn_san
 *
 * and the same with -DJN_NO_GOTO for the switch dispatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

enum { NOP = 0, MOVI = 1, LDI = 4, LDK = 5, LDF = 6, ADD = 8, SUB = 9, MUL = 10, DIV = 11, REM = 12, NEG = 13,
       SHL = 17, SHR = 18, SAR = 19, ADDI = 20, SUBI = 21, FDIV = 36, FSQRT = 38, ITOF = 42, FTOI = 43,
       JMP = 44, JLT = 49, JLTI = 55, CALL = 59, RET = 60, RETV = 61, TAILCALL = 62, BLEN = 74, BGET = 75,
       BSET = 76, BNEW = 73, BFINDR = 104, BCMP = 105, BCASECMP = 106, BTOI = 107, ITOB = 109 };

static uint64_t E(int op, int a, int b, int c, int32_t d) {
	return (uint64_t)op | (uint64_t)a << 8 | (uint64_t)b << 16 | (uint64_t)c << 24 | (uint64_t)(uint32_t)d << 32;
}
static uint64_t EBC(int op, int a, int16_t bc, int32_t d) {
	uint16_t u = (uint16_t)bc;
	return E(op, a, u & 0xff, u >> 8, d);
}

static int fails;
#define CHECK(c)                                                            \
	do {                                                                    \
		if (!(c)) {                                                         \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			fails++;                                                        \
		}                                                                   \
	} while (0)

/* A program: words (code of each function, then kint, then kflt), funcs. */
typedef struct {
	uint64_t words[256];
	uint64_t x[1024]; /* prepared (jn_prepare) */
	int64_t funcs[3 * 8];
	int nw, nf;
	int64_t kint, kflt;
} prog;

static void addfn(prog *p, const uint64_t *code, int n, int nregs, int nparams) {
	p->funcs[3 * p->nf] = p->nw;
	p->funcs[3 * p->nf + 1] = nregs;
	p->funcs[3 * p->nf + 2] = nparams;
	p->nf++;
	memcpy(p->words + p->nw, code, (size_t)n * 8);
	p->nw += n;
}

/* run fn until it leaves the C loop for good; returns the exit code and
 * the final io. Preemptions resume with the same budget. */
static const jn_bufs *bufs; /* the buffers of the next go() */

static int64_t go(prog *p, uint64_t *regs, int64_t nregs, jn_frame *frames, int64_t nframes,
                  int64_t budget, jn_io *io, int *preempts) {
	uint32_t stop = 0;
	int64_t ex;
	*preempts = 0;
	for (;;) {
		io->left = budget;
		io->nregs = nregs;
		io->nframes = nframes;
		io->maxframes = nframes;
		if (jn_prep_size(p->nw, p->kint, p->nf) > (int64_t)(sizeof p->x / sizeof p->x[0]))
			abort();
		jn_prepare(p->x, p->words, p->nw, p->funcs, p->nf, p->kint, p->kflt);
		ex = jn_run(io, regs, frames, p->x, &stop, bufs);
		/* every frame is in Go's form again: a function index */
		for (int64_t i = 0; i <= io->fp; i++)
			CHECK(frames[i].fn >= 0 && frames[i].fn < p->nf);
		if (ex != JN_EXIT_PREEMPT)
			return ex;
		(*preempts)++;
	}
}

static void test_fib(int64_t budget) {
	prog p = {0};
	/* main(n): call r0 <- fib(n); ret r0 (exits: the entry returns) */
	uint64_t mainf[] = {E(CALL, 0, 0, 1, 1), E(RET, 0, 0, 0, 0)};
	uint64_t fib[] = {EBC(JLTI, 0, 2, 8), E(SUBI, 1, 0, 0, 1), E(CALL, 1, 0, 1, 1), E(SUBI, 2, 0, 0, 2),
	                  E(CALL, 2, 0, 1, 1), E(ADD, 1, 1, 2, 0), E(RET, 1, 0, 0, 0), E(NOP, 0, 0, 0, 0),
	                  E(RET, 0, 0, 0, 0)};
	addfn(&p, mainf, 2, 1, 1);
	addfn(&p, fib, 9, 3, 1);
	p.kint = p.kflt = p.nw;
	int64_t nregs = 128;
	uint64_t *regs = calloc((size_t)nregs, 8);
	jn_frame *frames = calloc(64, sizeof *frames);
	regs[0] = 20;
	jn_io io = {0};
	int pre;
	int64_t ex = go(&p, regs, nregs, frames, 64, budget, &io, &pre);
	CHECK(ex == JN_EXIT_OP);
	CHECK(io.fp == 0 && frames[0].pc == 1); /* at the entry's ret */
	CHECK(regs[0] == 6765);
	if (budget < 1000)
		CHECK(pre > 0);
	free(regs);
	free(frames);
}

/* one binary op on (b, c); returns the exit code, result in *out */
static int64_t binop(int op, uint64_t b, uint64_t c, uint64_t *out) {
	prog p = {0};
	uint64_t f[] = {E(op, 0, 1, 2, 0), E(RET, 0, 0, 0, 0)};
	addfn(&p, f, 2, 3, 0);
	p.kint = p.kflt = p.nw;
	uint64_t regs[3] = {0, b, c};
	jn_frame frames[1] = {{0, 0, 0}};
	jn_io io = {0};
	int pre;
	int64_t ex = go(&p, regs, 3, frames, 1, 100, &io, &pre);
	*out = regs[0];
	if (ex == JN_EXIT_OP && frames[0].pc == 0)
		return -1; /* exited AT the op: a trap condition */
	return ex;
}

static uint64_t D2U(double d) {
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static void test_arith(void) {
	uint64_t r, MIN = (uint64_t)1 << 63, M1 = ~(uint64_t)0;
	CHECK(binop(DIV, 7, 0, &r) == -1);
	CHECK(binop(REM, 7, 0, &r) == -1);
	CHECK(binop(DIV, MIN, M1, &r) == -1);
	CHECK(binop(REM, MIN, M1, &r) == -1);
	CHECK(binop(DIV, (uint64_t)-7, 2, &r) == JN_EXIT_OP && r == (uint64_t)-3);
	CHECK(binop(REM, (uint64_t)-7, 2, &r) == JN_EXIT_OP && r == (uint64_t)-1);
	CHECK(binop(MUL, MIN, M1, &r) == JN_EXIT_OP && r == MIN);
	CHECK(binop(ADD, MIN - 1, 1, &r) == JN_EXIT_OP && r == MIN);
	CHECK(binop(SUB, MIN, 1, &r) == JN_EXIT_OP && r == MIN - 1);
	CHECK(binop(SHL, 1, 64, &r) == JN_EXIT_OP && r == 1);
	CHECK(binop(SHL, 1, 65, &r) == JN_EXIT_OP && r == 2);
	CHECK(binop(SHL, 1, M1, &r) == JN_EXIT_OP && r == MIN);
	CHECK(binop(SHR, MIN, 63, &r) == JN_EXIT_OP && r == 1);
	CHECK(binop(SAR, MIN, 63, &r) == JN_EXIT_OP && r == M1);
	CHECK(binop(SAR, MIN, 64, &r) == JN_EXIT_OP && r == MIN);
	CHECK(binop(FDIV, D2U(1), D2U(0), &r) == JN_EXIT_OP && r == D2U(INFINITY));
	CHECK(binop(FTOI, D2U(NAN), 0, &r) == JN_EXIT_OP && r == 0);
	CHECK(binop(FTOI, D2U(INFINITY), 0, &r) == JN_EXIT_OP && r == MIN - 1);
	CHECK(binop(FTOI, D2U(-INFINITY), 0, &r) == JN_EXIT_OP && r == MIN);
	CHECK(binop(FTOI, D2U(1e300), 0, &r) == JN_EXIT_OP && r == MIN - 1);
	CHECK(binop(FTOI, D2U(-2.5), 0, &r) == JN_EXIT_OP && r == (uint64_t)-2);
	CHECK(binop(ITOF, MIN, 0, &r) == JN_EXIT_OP && r == D2U(-0x1p63));
	CHECK(binop(FSQRT, D2U(-1), 0, &r) == JN_EXIT_OP);
	CHECK(binop(BGET, 0, 0, &r) == -1); /* no buffer table: exits at it */
	CHECK(binop(BNEW, 0, 0, &r) == -1); /* outside the hot subset: exits at it */
}

/* tail calls in a loop of 10000, a too-small register stack, the depth limit */
static void test_tail_and_limits(void) {
	prog p = {0};
	/* sum(n, acc): if n < 1 ret acc; acc += n; n--; tailcall sum(n, acc) */
	uint64_t sum2[] = {EBC(JLTI, 0, 1, 6), E(ADD, 1, 1, 0, 0), E(SUBI, 0, 0, 0, 1), E(MOVI, 2, 0, 0, 0),
	                   E(MOVI, 3, 1, 0, 0), E(TAILCALL, 2, 0, 2, 0), E(RET, 1, 0, 0, 0)};
	/* small: tailcall big (whose frame of 10 registers does not fit) */
	uint64_t small[] = {E(TAILCALL, 0, 0, 1, 2)};
	uint64_t big[] = {E(RET, 0, 0, 0, 0)};
	addfn(&p, sum2, 7, 4, 2);
	addfn(&p, small, 1, 1, 1);
	addfn(&p, big, 1, 10, 1);
	p.kint = p.kflt = p.nw;
	uint64_t regs[4] = {10000, 0, 0, 0};
	jn_frame frames[1] = {{0, 0, 0}};
	jn_io io = {0};
	int pre;
	int64_t ex = go(&p, regs, 4, frames, 1, 7, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 6 && regs[1] == 50005000);
	CHECK(pre > 1000);
	/* register stack too small for the callee: exits at the tailcall */
	uint64_t regs2[4] = {5, 0, 0, 0};
	frames[0] = (jn_frame){1, 0, 0};
	ex = go(&p, regs2, 4, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 0);
	/* a recursion deeper than the frame stack exits at the call */
	prog q = {0};
	uint64_t rec[] = {E(CALL, 1, 0, 0, 0), E(RETV, 0, 0, 0, 0)};
	addfn(&q, rec, 2, 2, 0);
	q.kint = q.kflt = q.nw;
	uint64_t *regs3 = calloc(200, 8);
	jn_frame fr[50];
	memset(fr, 0, sizeof fr);
	ex = go(&q, regs3, 200, fr, 50, 1000, &io, &pre);
	CHECK(ex == JN_EXIT_OP && io.fp == 49 && fr[49].pc == 0);
	free(regs3);
}

/* blen, bget and bset on a table of two buffers; other handles and
 * indexes out of range exit at the instruction */
static void test_bufs(void) {
	uint8_t b0[8] = {0}, b1[3] = {7, 8, 9};
	jn_bufs t = {2, {{0x1001, b0, 8}, {0x2002, b1, 3}}};
	/* f(h, i, v): bset h[i] = v; r3 = bget h[i]; r4 = blen h; r3 += r4; ret r3 */
	uint64_t f[] = {E(BSET, 0, 1, 2, 0), E(BGET, 3, 0, 1, 0), E(BLEN, 4, 0, 0, 0), E(ADD, 3, 3, 4, 0),
	                E(RET, 3, 0, 0, 0)};
	prog p = {0};
	addfn(&p, f, 5, 5, 3);
	p.kint = p.kflt = p.nw;
	jn_frame frames[1];
	jn_io io = {0};
	int pre;
	int64_t ex;
	bufs = &t;
	uint64_t r1[5] = {0x1001, 5, 0x1ff, 0, 0};
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r1, 5, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 4 && r1[3] == 0xff + 8 && b0[5] == 0xff);
	uint64_t r2[5] = {0x2002, 2, 1, 0, 0};
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r2, 5, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 4 && r2[3] == 1 + 3 && b1[2] == 1);
	uint64_t r3[5] = {0x2002, 3, 1, 0, 0}; /* out of range: exits at bset */
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r3, 5, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 0 && io.left == 100);
	uint64_t r4[5] = {0x3003, 0, 1, 0, 0}; /* not in the table */
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r4, 5, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 0);
	bufs = 0;
	uint64_t r5[5] = {0x1001, 0, 1, 0, 0}; /* no table */
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r5, 5, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 0);
}

/* the ABI 1.3 primitives on a table of buffers, at the ends of their
 * ranges (empty buffers have no memory: p is 0) */
static void test_bytes13(void) {
	uint8_t hay[] = "Content-Length: 42\r\n\r\nstale", name[] = "content-length:", crlf[] = "\r\n";
	uint8_t out[4] = {0};
	jn_bufs t = {4, {{0x11, hay, 27}, {0x12, name, 15}, {0x13, crlf, 2}, {0x15, out, 4}}};
	jn_bufs empty = {2, {{0x14, 0, 0}, {0x15, out, 4}}};
	/* f(h, n, lo, hi): r4 = bfindr h, n, lo, hi; r5 = bcasecmp h, lo, hi, n;
	 * r6, r7 = btoi h, lo, hi; r8 = bcmp h, lo, hi, n; r11 = itob 0x15, 0, r6;
	 * ret r11 */
	uint64_t f[] = {E(BFINDR, 4, 0, 1, 2 | 3 << 8), E(BCASECMP, 5, 0, 2, 3 | 1 << 8),
	                E(BTOI, 6, 0, 2, 3 | 7 << 8), E(BCMP, 8, 0, 2, 3 | 1 << 8), E(LDI, 9, 0, 0, 0x15),
	                E(LDI, 10, 0, 0, 0), E(ITOB, 11, 9, 10, 6), E(RET, 11, 0, 0, 0)};
	prog p = {0};
	addfn(&p, f, 8, 12, 4);
	p.kint = p.kflt = p.nw;
	jn_frame frames[1];
	jn_io io = {0};
	int pre;
	int64_t ex;
	bufs = &t;
	uint64_t r1[12] = {0x11, 0x13, 16, 27};
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r1, 12, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 7);
	CHECK(r1[4] == 18 && r1[5] == 1 && r1[6] == 42 && r1[7] == 18 && r1[8] == 1 && r1[11] == 2 && memcmp(out, "42", 2) == 0);
	uint64_t r2[12] = {0x11, 0x12, 0, 27}; /* the name at 0, case folded */
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r2, 12, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 7 && r2[4] == (uint64_t)-1 && r2[5] == 0 && r2[7] == 0 && r2[8] == (uint64_t)-1 && r2[11] == 1);
	uint64_t r3[12] = {0x14, 0x14, 0, 0}; /* an empty buffer, an empty needle */
	bufs = &empty;
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r3, 12, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 7 && r3[4] == 0 && r3[5] == 0 && r3[7] == 0 && r3[11] == 1);
	uint64_t r4[12] = {0x11, 0x13, 20, 28}; /* past the end: exits at bfindr */
	bufs = &t;
	frames[0] = (jn_frame){0, 0, 0};
	ex = go(&p, r4, 12, frames, 1, 100, &io, &pre);
	CHECK(ex == JN_EXIT_OP && frames[0].pc == 0 && io.left == 100);
	bufs = 0;
}

int main(void) {
	test_fib(5);
	test_fib(25000);
	test_fib(INT64_MAX / 2);
	test_arith();
	test_tail_and_limits();
	test_bufs();
	test_bytes13();
	if (fails) {
		fprintf(stderr, "%d checks failed\n", fails);
		return 1;
	}
	printf("jn sanitize driver: ok\n");
	return 0;
}
