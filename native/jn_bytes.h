/* The bounded byte primitives of ABI 1.3 (vmloop/isa_bytes.go) in the C
 * loop: bfindr, bcmp, bcasecmp, btoi and itob on the byte buffers of a
 * call's table (loop.h, jn_bufs). Included by loop.c only.
 *
 * Each one runs in C only when the Go loop would do it in a single chunk
 * without a trap: every buffer it names is in the table (a null b or n
 * here), the range is in bounds, and the work is at most JN_CHUNK bytes
 * (bfindr: and the needle at most JN_FIND_MAX bytes, so the naive scan
 * stays linear). Then it returns the reductions the Go loop charges past
 * the instruction's base cost (vmloop/interp_bytes.go: ceil(n/64) for the
 * n bytes scanned, compared or parsed; itob: none), else -1 (0 for itob):
 * the instruction exits to Go, which runs it, chunks it or traps. */
#ifndef JADE_NATIVE_JN_BYTES_H
#define JADE_NATIVE_JN_BYTES_H

/* vmloop's bulkChunk: the most bytes of one chunk */
#define JN_CHUNK (64 << 10)
/* the longest needle bfindr scans for in C */
#define JN_FIND_MAX 16

/* ceil(n/64), vmloop's charge */
static inline int64_t jn_charge(int64_t n) { return (n + 63) >> 6; }

/* jn_range reports whether [from, to) lies in a buffer of n bytes. */
static inline int jn_range(int64_t from, int64_t to, int64_t n) { return from >= 0 && from <= to && to <= n; }

/* bfindr: *res = the first i in [from, to - len(nd)] where nd matches h at
 * i, or -1. */
static int64_t jn_bfindr(const jn_buf *h, const jn_buf *nd, uint64_t fromr, uint64_t tor, int64_t *res) {
	int64_t from = jn_s(fromr), to = jn_s(tor), m, n, i;
	if (!h || !nd || !jn_range(from, to, h->n) || nd->n > JN_FIND_MAX)
		return -1;
	m = nd->n;
	n = to - m - from + 1; /* candidate offsets */
	if (n > JN_CHUNK)
		return -1;
	for (i = 0; i < n; i++) {
		if (m == 0 || memcmp(h->p + from + i, nd->p, (size_t)m) == 0) {
			*res = from + i;
			return jn_charge(i + 1);
		}
	}
	*res = -1;
	return n > 0 ? jn_charge(n) : 0;
}

static inline uint8_t jn_lower(uint8_t c) { return (uint8_t)(c - 'A') < 26 ? (uint8_t)(c + ('a' - 'A')) : c; }

/* bcmp and bcasecmp (fold): *res = -1, 0 or 1 as h[off:min(off+len(nd),
 * to)] sorts before, equal to or after nd. */
static int64_t jn_bcmp(const jn_buf *h, const jn_buf *nd, uint64_t offr, uint64_t tor, int fold, int64_t *res) {
	int64_t off = jn_s(offr), to = jn_s(tor), k, i;
	int c = 0;
	if (!h || !nd || !jn_range(off, to, h->n))
		return -1;
	k = nd->n < to - off ? nd->n : to - off; /* bytes compared */
	if (k > JN_CHUNK)
		return -1;
	if (k > 0 && !fold)
		c = memcmp(h->p + off, nd->p, (size_t)k);
	for (i = 0; fold && i < k && c == 0; i++) {
		uint8_t x = jn_lower(h->p[off + i]), y = jn_lower(nd->p[i]);
		c = x < y ? -1 : x > y;
	}
	*res = c < 0 ? -1 : c > 0 ? 1 : k < nd->n ? -1 : 0;
	return jn_charge(k);
}

/* btoi: an optional sign and decimal digits at b[from:to]; *v the value
 * and *end the offset past them, or 0 and from (no digits), or 0 and -1
 * (out of the i64 range). */
static int64_t jn_btoi(const jn_buf *b, uint64_t fromr, uint64_t tor, uint64_t *v, uint64_t *end) {
	int64_t from = jn_s(fromr), to = jn_s(tor), n, j, first = 0;
	uint64_t acc = 0, limit = (uint64_t)INT64_MAX;
	const uint8_t *s;
	int neg;
	if (!b || !jn_range(from, to, b->n))
		return -1;
	n = to - from;
	if (n > JN_CHUNK)
		return -1;
	if (n == 0) {
		*v = 0;
		*end = (uint64_t)from;
		return 0;
	}
	s = b->p + from;
	neg = s[0] == '-';
	if (neg || s[0] == '+')
		first = 1;
	limit += (uint64_t)neg; /* 2^63 for a negative number */
	for (j = first; j < n && s[j] >= '0' && s[j] <= '9'; j++) {
		uint64_t d = (uint64_t)(s[j] - '0');
		if (acc > (limit - d) / 10) {
			*v = 0;
			*end = ~(uint64_t)0; /* -1 */
			return jn_charge(j + 1);
		}
		acc = acc * 10 + d;
	}
	if (j == first) {
		*v = 0;
		*end = (uint64_t)from;
	} else {
		*v = neg ? 0 - acc : acc;
		*end = (uint64_t)(from + j);
	}
	return jn_charge(j);
}

/* itob: writes decimal x into b at off; *next = off + its length. 0 when
 * it does not fit (Go traps). */
static int jn_itob(const jn_buf *b, uint64_t offr, uint64_t x, uint64_t *next) {
	uint8_t tmp[20];
	int64_t off = jn_s(offr), len;
	uint64_t u = (x >> 63) ? 0 - x : x; /* the magnitude, 2^63 included */
	int i = (int)sizeof tmp;
	do {
		tmp[--i] = (uint8_t)('0' + u % 10);
		u /= 10;
	} while (u);
	if (x >> 63)
		tmp[--i] = '-';
	len = (int64_t)sizeof tmp - i;
	if (!b || off < 0 || off > b->n - len)
		return 0;
	memcpy(b->p + off, tmp + i, (size_t)len);
	*next = (uint64_t)(off + len);
	return 1;
}

#endif
