package vmloop

// The map's index (map.go): open-addressing tables of 8-byte slots, in
// segments made when first written, and how entries are placed in them.

// mapIndex is a table of slots in segments (nil: not written yet, all
// empty).
type mapIndex struct {
	segs [][]uint64
	mask uint64 // slots - 1
	used int    // slots not empty (live and tombstones)
	// fill is what the moves of the index go by: the live entries when the
	// table was started plus the keys put since, an upper bound of used
	// (used <= fill) that, unlike used, does not depend on the hash (where
	// deletes fall relative to a move), so that every run of a program
	// moves its indexes at the same operations and accounts the same bytes.
	fill int
}

func newMapIndex(slots int) *mapIndex {
	nseg := (slots + mapSeg - 1) / mapSeg
	return &mapIndex{segs: make([][]uint64, nseg), mask: uint64(slots - 1)}
}

func (x *mapIndex) slots() int { return int(x.mask) + 1 }

func (x *mapIndex) get(i uint64) uint64 {
	s := x.segs[i>>mapSegShift]
	if s == nil {
		return 0
	}
	return s[i&(mapSeg-1)]
}

func (x *mapIndex) set(i, v uint64) {
	s := x.segs[i>>mapSegShift]
	if s == nil {
		s = make([]uint64, min(mapSeg, x.slots()))
		x.segs[i>>mapSegShift] = s
	}
	s[i&(mapSeg-1)] = v
}

// place writes the slot of the entry at pos (hash h) into the first empty
// slot of its probe sequence in x (tombstones stay until the next move
// drops them) and returns the slot.
func (m *hmap) place(x *mapIndex, h uint64, pos int) uint64 {
	i := h & x.mask
	for d := uint64(1); ; d++ {
		m.probes++
		if x.get(i) == 0 {
			x.used++
			x.set(i, slotOf(h, pos))
			return i
		}
		i = (i + d) & x.mask
	}
}

// slotOf is the slot naming the entry at pos whose hash is h: the hash's
// low 32 bits (the tag), which hold every bit of h that picks a home slot
// (a table has at most 2^32 slots), so that a move of the index reads the
// old table alone, in order, and never the entries.
func slotOf(h uint64, pos int) uint64 { return (h&slotTagMask)<<32 | uint64(pos+2) }

// slotTagMask keeps the bits of a hash that a slot holds.
const slotTagMask = 1<<32 - 1

// unplace turns the slot of x that names the entry at pos into a
// tombstone.
func (m *hmap) unplace(x *mapIndex, h uint64, pos int) {
	want := slotOf(h, pos)
	for i, d := h&x.mask, uint64(1); ; i, d = (i+d)&x.mask, d+1 {
		m.probes++
		s := x.get(i)
		if s == want {
			x.set(i, slotTomb)
			return
		}
		if s == 0 {
			return
		}
	}
}
