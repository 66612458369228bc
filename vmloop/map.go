package vmloop

import (
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// The map object's table (docs/ISA.md, "Maps"): a hash table keyed by
// i64 or by the bytes of a string or bytes object, whose values are of one
// type (i64, f64 or ref), with every operation bounded so that no single
// one is a long step (spec S-6).
//
// Entries live in chunks of mapChunk entries that never move: an entry's
// position is its cursor (map.next, map.key_*, map.val_*), and a deleted
// entry's slot goes on a free list that later puts reuse. Growing the
// entries appends a chunk (the first chunk grows by doubling up to
// mapChunk), never copies them, so a put is O(1) at any size. An
// iteration visits every entry that was there when it began and was not
// deleted before the cursor reached it exactly once, whatever is deleted
// meanwhile (the current key included); an entry put during the iteration
// may or may not be visited (as in Go).
//
// The index is an open-addressing table (triangular probing: offsets 1,
// 2, 3, ... from the last slot, which visits every slot of a table of 2^n
// and clusters less than linear probing) of slots naming
// entries, split into segments of mapSeg slots made when first written.
// When it is half full (entries and tombstones) a new table of twice the
// size (or of the same size, when tombstones are most of it) is started
// and filled incrementally: every put moves the next mig.step slots of the
// old table into it, in order, so that the move ends before the old table
// is 7/8 full (mig.step is set from the slots to move and the room left:
// 4 when a move starts at half full). Until the move ends the old table
// answers every lookup and takes every put and delete, and the new one
// gets the puts and deletes of the slots the move has passed; at the end
// the new table replaces the old. A rehash is therefore never one long
// step: a put does at most mig.step moves and makes at most as many
// segments (TestMapRehashIsIncremental measures the longest at 10M keys).
//
// Keys are hashed with a per-map random seed (hash/maphash for the bytes
// of a key, a seeded folded multiply for an i64), so keys chosen to
// collide under one map's hash (hash flooding) do not collide under
// another's (TestMapFloodingIsLinear counts the probes).

const (
	mapChunkShift = 8
	mapChunk      = 1 << mapChunkShift // entries a chunk holds
	mapSegShift   = 13
	mapSeg        = 1 << mapSegShift // slots an index segment holds (64 KiB)
	mapMinSlots   = 8

	// slotTomb marks a deleted slot; 0 is an empty one; every other slot
	// is the top 32 bits of the entry's hash and its position + 2.
	slotTomb = 1

	// mapEntryBytes and mapSlotBytes are what the heap accounts for an
	// entry (its capacity, used or not; a string or bytes key's entry adds
	// mapKeyBytes) and an index slot.
	mapEntryBytes = int64(unsafe.Sizeof(mapEntry{}))
	mapKeyBytes   = int64(unsafe.Sizeof(""))
	mapSlotBytes  = 8

	// mapMaxKey is the longest string or bytes key (a longer one traps):
	// hashing and comparing a key is one step, so its length bounds the
	// step.
	mapMaxKey = 64 << 10
)

// mapEntry is one key and its value. h is the key's hash with the top
// bit set while the entry is live, 0 while its slot is free (then v links
// the free list: the next free position + 1). A string or bytes key's
// bytes are in hmap.strs at the same position: an entry holds no pointer,
// so the garbage collector does not scan the entries of a map of i64 keys.
type mapEntry struct {
	h uint64
	k uint64 // an i64 key
	v uint64 // the value's bits (a handle for ref values)
}

const entryLive = 1 << 63

// mapMigration is an index move under way: to is the new table, pos the
// next slot of the old table to move, step the slots a put moves.
type mapMigration struct {
	to   *mapIndex
	pos  int
	step int
}

// hmap is the table of a map object (object.x of a KindMap object).
type hmap struct {
	chunks [][]mapEntry
	strs   [][]string // the keys of a map of string or bytes keys, chunk by chunk
	chunkN []int32    // live entries of each chunk (iteration skips empty chunks)
	top    int        // entry positions ever used (the high-water mark)
	free   int        // first free position + 1, 0: none
	live   int
	idx    *mapIndex
	mig    *mapMigration
	s0, s1 uint64 // i64 key seeds
	seed   maphash.Seed
	key    Kind // KindI64, KindString or KindBytes
	val    Type // TI64, TF64 or TRef
	found  bool // the last get found its key (map.found)
	// weak hashes with a fixed, weak function (tests of flooding only).
	weak bool
	// acct is the heap bytes the map accounts (objHeader included).
	acct int64
	// probes counts slots looked at (tests of flooding); moved counts
	// entry positions the moves of the index passed (what a put is
	// charged for them).
	probes, moved uint64
}

// mapSeed makes a new map's seed (tests that compare the heaps of two
// runs fix it: where a put fills a tombstone depends on the hash).
var mapSeed = maphash.MakeSeed

func newHmap(key Kind, val Type) *hmap {
	m := &hmap{key: key, val: val, seed: mapSeed(), idx: newMapIndex(mapMinSlots)}
	m.s0 = maphash.String(m.seed, "s0")
	m.s1 = maphash.String(m.seed, "s1") | 1
	m.acct = objHeader + mapMinSlots*mapSlotBytes
	return m
}

// mapKey is a key to look up: k for an i64 key, s for bytes (aliasing
// the caller's object: copied when stored).
type mapKey struct {
	k uint64
	s string
}

func (m *hmap) hash(key mapKey) uint64 {
	var h uint64
	switch {
	case m.weak && m.key == KindI64:
		h = key.k
	case m.weak:
		for i := 0; i < len(key.s); i++ { // Java's String.hashCode
			h = 31*h + uint64(key.s[i])
		}
		h = uint64(uint32(h))
	case m.key == KindI64:
		hi, lo := bits.Mul64(key.k^m.s0, m.s1)
		hi, lo = bits.Mul64(hi^lo^m.s0, 0x9e3779b97f4a7c15)
		h = hi ^ lo
	default:
		h = maphash.String(m.seed, key.s)
	}
	return h | entryLive
}

func (m *hmap) entry(pos int) *mapEntry {
	return &m.chunks[pos>>mapChunkShift][pos&(mapChunk-1)]
}

// str is the string or bytes key at pos.
func (m *hmap) str(pos int) *string {
	return &m.strs[pos>>mapChunkShift][pos&(mapChunk-1)]
}

// keyAt is the key of the live entry at pos.
func (m *hmap) keyAt(pos int) mapKey {
	if m.key == KindI64 {
		return mapKey{k: m.entry(pos).k}
	}
	return mapKey{s: *m.str(pos)}
}

// entryBytes is what the heap accounts for one entry position.
func (m *hmap) entryBytes() int64 {
	if m.key == KindI64 {
		return mapEntryBytes
	}
	return mapEntryBytes + mapKeyBytes
}

func (m *hmap) same(pos int, h uint64, key mapKey) bool {
	e := m.entry(pos)
	if e.h != h {
		return false
	}
	if m.key == KindI64 {
		return e.k == key.k
	}
	return *m.str(pos) == key.s
}

// lookup returns the slot of x that names key and the entry's position,
// or -1.
func (m *hmap) lookup(x *mapIndex, h uint64, key mapKey) (slot uint64, pos int) {
	tag := h & slotTagMask
	i := h & x.mask
	for d := uint64(1); ; d++ {
		m.probes++
		s := x.get(i)
		if s == 0 {
			return 0, -1
		}
		if s != slotTomb && s>>32 == tag {
			p := int(uint32(s)) - 2
			if m.same(p, h, key) {
				return i, p
			}
		}
		i = (i + d) & x.mask
	}
}

// find returns the position of key's entry, or -1.
func (m *hmap) find(key mapKey) int {
	_, pos := m.lookup(m.idx, m.hash(key), key)
	return pos
}

// get returns the value bits of key and whether it is there.
func (m *hmap) get(key mapKey) (uint64, bool) {
	if pos := m.find(key); pos >= 0 {
		return m.entry(pos).v, true
	}
	return 0, false
}

// mapGrowth is what a put needs the heap to account before it runs: the
// bytes of a new chunk or index, known from the map's state alone.
func (m *hmap) growth(keyLen int) int64 {
	n := int64(0)
	if m.free == 0 && m.top == m.capacity() {
		n += m.entryBytes() * int64(m.nextCapacity()-m.capacity())
	}
	if m.mig == nil && (m.idx.fill+1)*2 > m.idx.slots() {
		n += mapSlotBytes * int64(m.nextSlots())
	}
	if m.key != KindI64 {
		n += int64(keyLen)
	}
	return n
}

// capacity is the entry positions the chunks hold.
func (m *hmap) capacity() int {
	if len(m.chunks) == 0 {
		return 0
	}
	return (len(m.chunks)-1)*mapChunk + cap(m.chunks[len(m.chunks)-1])
}

func (m *hmap) nextCapacity() int {
	if len(m.chunks) == 1 && cap(m.chunks[0]) < mapChunk {
		return 2 * cap(m.chunks[0])
	}
	if len(m.chunks) == 0 {
		return 4
	}
	return m.capacity() + mapChunk
}

func (m *hmap) nextSlots() int {
	if m.live*4 >= m.idx.slots() {
		return 2 * m.idx.slots()
	}
	return m.idx.slots()
}

// put sets key to v and returns the entry's position. m.acct grows by
// what growth said at most, and shrinks when a move of the index ends.
func (m *hmap) put(key mapKey, v uint64) int {
	h := m.hash(key)
	if _, pos := m.lookup(m.idx, h, key); pos >= 0 {
		m.entry(pos).v = v
		m.migrate()
		return pos
	}
	if m.mig == nil && (m.idx.fill+1)*2 > m.idx.slots() {
		m.startMigration()
	}
	m.idx.fill++
	if m.mig != nil {
		m.mig.to.fill++
	}
	pos := m.takePos()
	e := m.entry(pos)
	e.h, e.k, e.v = h, key.k, v
	if m.key != KindI64 {
		*m.str(pos) = key.s
		m.acct += int64(len(key.s))
	}
	m.live++
	m.chunkN[pos>>mapChunkShift]++
	slot := m.place(m.idx, h, pos)
	if m.mig != nil {
		if slot < uint64(m.mig.pos) { // the move has passed it
			m.place(m.mig.to, h, pos)
		}
		m.migrate()
	}
	return pos
}

// takePos returns a free entry position, growing the chunks if none is.
func (m *hmap) takePos() int {
	if m.free != 0 {
		pos := m.free - 1
		m.free = int(m.entry(pos).v)
		return pos
	}
	if m.top == m.capacity() {
		c := m.nextCapacity()
		m.acct += m.entryBytes() * int64(c-m.capacity())
		strs := m.key != KindI64
		switch {
		case len(m.chunks) == 0:
			m.chunks = [][]mapEntry{make([]mapEntry, c)}
			m.chunkN = []int32{0}
			if strs {
				m.strs = [][]string{make([]string, c)}
			}
		case len(m.chunks) == 1 && cap(m.chunks[0]) < mapChunk:
			m.chunks[0] = append(make([]mapEntry, 0, c), m.chunks[0]...)[:c]
			if strs {
				m.strs[0] = append(make([]string, 0, c), m.strs[0]...)[:c]
			}
		default:
			m.chunks = append(m.chunks, make([]mapEntry, mapChunk))
			m.chunkN = append(m.chunkN, 0)
			if strs {
				m.strs = append(m.strs, make([]string, mapChunk))
			}
		}
	}
	m.top++
	return m.top - 1
}

// del removes key and reports whether it was there.
func (m *hmap) del(key mapKey) bool {
	h := m.hash(key)
	slot, pos := m.lookup(m.idx, h, key)
	if pos < 0 {
		return false
	}
	m.idx.set(slot, slotTomb)
	if m.mig != nil && slot < uint64(m.mig.pos) {
		m.unplace(m.mig.to, h, pos)
	}
	e := m.entry(pos)
	if m.key != KindI64 {
		m.acct -= int64(len(*m.str(pos)))
		*m.str(pos) = ""
	}
	*e = mapEntry{v: uint64(m.free)}
	m.free = pos + 1
	m.live--
	m.chunkN[pos>>mapChunkShift]--
	return true
}

// startMigration begins the move to a new index (see the top of the
// file).
func (m *hmap) startMigration() {
	n := m.nextSlots()
	m.acct += mapSlotBytes * int64(n)
	s := m.idx.slots()
	room := s*7/8 - m.idx.fill // puts before the old table is 7/8 full
	step := 1 + (s+room-1)/max(room, 1)
	to := newMapIndex(n)
	to.fill = m.live
	m.mig = &mapMigration{to: to, step: step}
}

// migrate moves the next mig.step slots of the old index into the new
// one, in order (reading the old table in order, writing the new one
// near the same relative place: few cache misses), and ends the move
// after the last.
func (m *hmap) migrate() {
	g := m.mig
	if g == nil {
		return
	}
	old := m.idx
	for n := 0; n < g.step && g.pos < old.slots(); n++ {
		if s := old.get(uint64(g.pos)); s > slotTomb {
			m.place(g.to, s>>32, int(uint32(s))-2)
		}
		g.pos++
		m.moved++
	}
	if g.pos == old.slots() {
		m.acct -= mapSlotBytes * int64(m.idx.slots())
		m.idx, m.mig = g.to, nil
	}
}

// next returns the first live entry position after cur (cur < 0: the
// first), or -1, and the chunks it skipped whole.
func (m *hmap) next(cur int) (int, int) {
	if cur >= m.top {
		return -1, 0
	}
	pos := max(cur+1, 0)
	skipped := 0
	for pos < m.top {
		c := pos >> mapChunkShift
		if m.chunkN[c] == 0 {
			pos = (c + 1) << mapChunkShift
			skipped++
			continue
		}
		if m.entry(pos).h != 0 {
			return pos, skipped
		}
		pos++
	}
	return -1, skipped
}

// at returns the live entry at pos, or nil.
func (m *hmap) at(pos int64) *mapEntry {
	if pos < 0 || pos >= int64(m.top) {
		return nil
	}
	if e := m.entry(int(pos)); e.h != 0 {
		return e
	}
	return nil
}
