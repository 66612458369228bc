package vmloop

import "strings"

// The search of BFIND and BFINDR.
//
// A needle of at most shortNeedle bytes is looked for with strings.Index
// over windows of bulkChunk candidate offsets, charged ⌈k/64⌉ for the k
// offsets tried: with so short a needle the work of one window is one
// vector compare per offset at most, and the C loop charges the same for
// its naive scan (native/jn_bytes.h).
//
// A longer needle would make each window cost its length again (the
// needle's hash, or a compare per false candidate of up to the whole
// needle: quadratic for a periodic needle), which one chunk cannot bound.
// It is looked for with the two-way algorithm of Crochemore and Perrin
// (linear, constant space, exact): the critical factorization of the
// needle, then a scan that compares its right half left to right and its
// left half right to left, shifting by the needle's period on a full
// right-half match. Its work is counted in units (unitIter, unitCall
// below); the search stops every bulkChunk units to look at the budget and
// the stop flag, its progress in a findState, and charges ⌈u/64⌉ for u
// units. So the charge is what was done (linear in the needle and the
// range), and no step does more than one chunk of it
// (TestLongNeedleChunked; TestLongNeedleMatchesIndex checks it against
// strings.Index).

// shortNeedle is the longest needle searched with strings.Index: the C
// loop's JN_FIND_MAX, whose naive scan charges the same. Past it a window
// of strings.Index costs more than its ⌈k/64⌉ (about 40 ns a reduction for
// a 16-byte needle that nearly matches at every offset, 120 ns for 64
// bytes, against 12–17 ns for the two-way search).
const shortNeedle = 16

// The units of work of a long-needle search, weighed so that a reduction
// takes about as long as it does in the other bulk instructions (64 bytes
// copied or compared): a byte compared, or skipped by IndexByte, is one
// unit; an iteration of the factorization (a byte loop) is unitIter units,
// and every compare or skip costs unitCall units beside its bytes (a
// candidate that mismatches at once is not free).
const (
	unitIter = 16
	unitCall = 16
)

// findChunk is the units of work of a long-needle search between two looks
// at the budget: bulkChunk (a variable so that tests cut the search into
// many chunks on small operands).
var findChunk int64 = bulkChunk

// findState is the progress of a long-needle search between two Runs
// (bulkState.find): the phase, the factorization's variables and the scan's
// offset and memory, all relative to the start of the searched range.
type findState struct {
	phase findPhase
	// the maximal-suffix computations (phases fpMaxLess, fpMaxMore): the
	// candidate suffix j, the offset k in the current period p, the best
	// suffix so far ms (-1: the whole needle); ms1, p1 the result of the
	// first ordering
	ms, j, k, p, ms1, p1 int64
	// the factorization: crit the first index of the right half, per the
	// shift after a full right-half match, mem0 the memory it leaves
	// (needle length - period for a periodic needle, else 0)
	crit, per, mem0 int64
	// the scan: candidate offset pos, memory mem (a prefix of the needle
	// known to match at pos), i the index being compared
	pos, mem, i int64
}

// findPhase is a step of the long-needle search.
type findPhase uint8

const (
	fpMaxLess  findPhase = iota // maximal suffix, byte order
	fpMaxMore                   // maximal suffix, reversed byte order
	fpPeriodic                  // is needle[:crit] == needle[per:per+crit]? (at i)
	fpNext                      // a new candidate offset
	fpRight                     // comparing the right half at i
	fpLeft                      // comparing the left half down from i
)

// find returns the first offset in [from, to-len(needle)] where needle
// occurs in hay, or -1, charging its work to left; preempted is true when
// it stopped between two chunks with work left, its progress saved in
// bulkState for the Run that resumes it at pc, which passes the saved done
// and fs back (zero and nil for a fresh start).
func (e *Exec) find(hay, needle string, from, to, done int64, fs *findState, pc int, left int64) (res, left2 int64, preempted bool) {
	fnIdx := e.frames[e.fp].fn
	bs := &e.x().bulk
	m := int64(len(needle))
	n := to - m - from + 1 // candidate offsets
	if n <= 0 {
		return -1, left, false
	}
	if m > shortNeedle {
		if fs == nil {
			fs = &findState{ms: -1, k: 1, p: 1}
		}
		res, left, preempted = e.twoWay(fs, hay[from:to], needle, left)
		if preempted {
			*bs = bulkState{on: true, fn: fnIdx, pc: pc, find: fs}
			return 0, left, true
		}
		if res >= 0 {
			res += from
		}
		return res, left, false
	}
	for done < n {
		k := min(n-done, bulkChunk)
		pos := from + done
		if i := strings.Index(hay[pos:pos+k+m-1], needle); i >= 0 {
			return pos + int64(i), left - charge(int64(i)+1), false
		}
		done += k
		left -= charge(k)
		if done < n && (left <= 0 || e.stop.Load()) {
			*bs = bulkState{on: true, fn: fnIdx, pc: pc, done: done}
			return 0, left, true
		}
	}
	return -1, left, false
}

// twoWay runs the long-needle search of x in t from fs (see above) and
// returns the offset of the first match in t or -1, or preempted.
func (e *Exec) twoWay(fs *findState, t, x string, left int64) (res, left2 int64, preempted bool) {
	m := int64(len(x))
	last := int64(len(t)) - m // the last candidate offset
	var u int64               // units of work of this chunk
	for {
		if u >= findChunk {
			left -= charge(u)
			u = 0
			if left <= 0 || e.stop.Load() {
				return 0, left, true
			}
		}
		room := findChunk - u
		switch fs.phase {
		case fpMaxLess, fpMaxMore:
			rev := fs.phase == fpMaxMore
			steps := max(room/unitIter, 1)
			var did int64
			fs.ms, fs.j, fs.k, fs.p, did = maxSuffix(x, rev, fs.ms, fs.j, fs.k, fs.p, steps)
			u += did * unitIter
			if fs.j+fs.k < m {
				continue
			}
			if !rev {
				fs.ms1, fs.p1 = fs.ms, fs.p
				fs.phase, fs.ms, fs.j, fs.k, fs.p = fpMaxMore, -1, 0, 1, 1
				continue
			}
			// the longer of the two suffixes: its start and period
			if fs.ms < fs.ms1 {
				fs.crit, fs.per = fs.ms1+1, fs.p1
			} else {
				fs.crit, fs.per = fs.ms+1, fs.p
			}
			fs.phase, fs.i = fpPeriodic, 0
			if fs.per+fs.crit > m { // cannot repeat: not periodic
				fs.per, fs.mem0 = max(fs.crit, m-fs.crit)+1, 0
				fs.phase, fs.pos, fs.mem = fpNext, 0, 0
			}
		case fpPeriodic:
			k := min(fs.crit-fs.i, room)
			c := commonPrefix(x[fs.i:fs.i+k], x[fs.per+fs.i:fs.per+fs.i+k])
			fs.i += c
			u += c + unitCall
			switch {
			case c < k: // not periodic: any mismatch shifts past the halves
				fs.per, fs.mem0 = max(fs.crit, m-fs.crit)+1, 0
			case fs.i == fs.crit:
				fs.mem0 = m - fs.per
			default:
				continue
			}
			fs.phase, fs.pos, fs.mem = fpNext, 0, 0
		case fpNext:
			if fs.pos > last {
				return -1, left - charge(u), false
			}
			fs.i = max(fs.crit, fs.mem)
			fs.phase = fpRight
			if fs.mem == 0 {
				// Offsets whose byte at crit differs from the needle's
				// each shift by one: skip them all at once.
				end := min(last, fs.pos+room-1) + fs.crit
				j := int64(strings.IndexByte(t[fs.pos+fs.crit:end+1], x[fs.crit]))
				u += unitCall
				if j < 0 {
					u += end + 1 - fs.pos - fs.crit
					fs.pos = end + 1 - fs.crit
					fs.phase = fpNext
					continue
				}
				u += j
				fs.pos += j
			}
		case fpRight:
			k := min(m-fs.i, room)
			c := commonPrefix(x[fs.i:fs.i+k], t[fs.pos+fs.i:fs.pos+fs.i+k])
			fs.i += c
			u += c + unitCall
			switch {
			case c < k: // a mismatch at i: shift past it
				fs.pos += fs.i - fs.crit + 1
				fs.mem = 0
				fs.phase = fpNext
			case fs.i == m:
				fs.i = fs.crit
				fs.phase = fpLeft
			}
		case fpLeft:
			// x[mem:i] is compared from its end
			if fs.i <= fs.mem {
				return fs.pos, left - charge(u), false
			}
			k := min(fs.i-fs.mem, room)
			c := commonSuffix(x[fs.i-k:fs.i], t[fs.pos+fs.i-k:fs.pos+fs.i])
			fs.i -= c
			u += c + unitCall
			switch {
			case fs.i == fs.mem:
				return fs.pos, left - charge(u), false
			case c < k: // a mismatch in the left half: shift by the period
				fs.pos += fs.per
				fs.mem = fs.mem0
				fs.phase = fpNext
			}
		}
	}
}

// maxSuffix runs at most steps iterations of Crochemore–Perrin's maximal
// suffix computation of x (as glibc's critical_factorization; the reversed
// byte order with rev) from the candidate suffix j, the offset k in the
// current period p and the best suffix so far ms (-1: all of x), and
// returns them with the iterations done.
func maxSuffix(x string, rev bool, ms, j, k, p, steps int64) (ms2, j2, k2, p2, did int64) {
	m := int64(len(x))
	for ; did < steps && j+k < m; did++ {
		a, b := x[j+k], x[ms+k]
		if rev {
			a, b = b, a
		}
		switch {
		case a < b: // a smaller suffix: the period is the prefix so far
			j += k
			k = 1
			p = j - ms
		case a == b: // through the current period
			if k != p {
				k++
			} else {
				j += p
				k = 1
			}
		default: // a larger suffix: start over from here
			ms = j
			j++
			k, p = 1, 1
		}
	}
	return ms, j, k, p, did
}

// commonPrefix returns the length of the common prefix of a and b, of equal
// lengths.
func commonPrefix(a, b string) int64 {
	i := 0
	for i+64 <= len(a) && a[i:i+64] == b[i:i+64] {
		i += 64
	}
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return int64(i)
}

// commonSuffix returns the length of the common suffix of a and b, of equal
// lengths.
func commonSuffix(a, b string) int64 {
	i := len(a)
	for i >= 64 && a[i-64:i] == b[i-64:i] {
		i -= 64
	}
	for i > 0 && a[i-1] == b[i-1] {
		i--
	}
	return int64(len(a) - i)
}
