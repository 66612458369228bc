package vmloop

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkModel compares m with the Go map model: length, every key's value,
// and an iteration that visits each key once.
func checkModel(t *testing.T, m *hmap, model map[mapKey]uint64) {
	t.Helper()
	require.Equal(t, len(model), m.live)
	for k, v := range model {
		got, ok := m.get(k)
		require.True(t, ok, "key %v", k)
		require.Equal(t, v, got, "key %v", k)
	}
	seen := map[mapKey]bool{}
	for pos, _ := m.next(-1); pos >= 0; pos, _ = m.next(pos) {
		e := m.entry(pos)
		k := m.keyAt(pos)
		require.False(t, seen[k], "key %v visited twice", k)
		seen[k] = true
		require.Equal(t, model[k], e.v)
	}
	require.Len(t, seen, len(model))
}

// randKey draws a key from a small space (so that puts replace and deletes
// hit) of the map's kind.
func randKey(r *rand.Rand, key Kind, space int) mapKey {
	n := r.IntN(space)
	if key == KindI64 {
		return mapKey{k: uint64(n) * 0x9e37}
	}
	return mapKey{s: strings.Repeat("k", n%7) + fmt.Sprint(n)}
}

// TestMapModel: random sequences of puts, gets, deletes and iterations
// (deleting the current key) agree with a Go map, for i64 and string
// keys, through many incremental rehashes.
func TestMapModel(t *testing.T) {
	for _, key := range []Kind{KindI64, KindString} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%s/%d", key, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 7))
				m := newHmap(key, TI64)
				model := map[mapKey]uint64{}
				space := 50 << (seed % 5 * 2) // 50 .. 12800 keys
				for op := 0; op < 40000; op++ {
					k := randKey(r, key, space)
					switch x := r.IntN(100); {
					case x < 55:
						v := r.Uint64()
						m.put(k, v)
						model[k] = v
					case x < 80:
						got, ok := m.get(k)
						want, wok := model[k]
						require.Equal(t, wok, ok)
						require.Equal(t, want, got)
					case x < 98:
						_, wok := model[k]
						require.Equal(t, wok, m.del(k))
						delete(model, k)
					default: // iterate, deleting about half, the current key each time
						for pos, _ := m.next(-1); pos >= 0; pos, _ = m.next(pos) {
							if r.IntN(2) == 0 {
								ek := m.keyAt(pos)
								require.True(t, m.del(ek))
								delete(model, ek)
							}
						}
					}
					require.LessOrEqual(t, m.idx.used, m.idx.fill, "fill bounds the used slots")
					require.LessOrEqual(t, m.idx.used*8, m.idx.slots()*7, "the old index never passes 7/8 during a move")
					if m.mig != nil {
						require.LessOrEqual(t, m.mig.to.used, m.mig.to.fill)
					}
					if op%5000 == 0 {
						checkModel(t, m, model)
					}
				}
				checkModel(t, m, model)
				require.LessOrEqual(t, m.idx.used*8, m.idx.slots()*7, "the old index never passes 7/8 during a move")
			})
		}
	}
}

// TestMapIterationStable: an iteration that deletes every key it visits
// (the current one) and puts as many new keys visits each key that was
// there when it began exactly once.
func TestMapIterationStable(t *testing.T) {
	m := newHmap(KindI64, TI64)
	for i := range 10000 {
		m.put(mapKey{k: uint64(i)}, uint64(i))
	}
	seen := map[uint64]int{}
	next := uint64(1 << 40)
	for pos, _ := m.next(-1); pos >= 0; pos, _ = m.next(pos) {
		e := m.entry(pos)
		seen[e.k]++
		require.True(t, m.del(mapKey{k: e.k}))
		m.put(mapKey{k: next}, 0)
		next++
	}
	for i := range 10000 {
		require.Equal(t, 1, seen[uint64(i)], "key %d", i)
	}
	require.Equal(t, 10000, m.live)
}

// floodKeys returns n distinct keys that collide by construction under
// the weak hashes: i64 keys that are multiples of 2^32 (the identity hash
// puts all of them in slot 0 of any table of up to 2^32 slots), and
// strings made of the blocks "Aa" and "BB", which Java's String.hashCode
// maps to the same value, so all strings of k blocks collide.
func floodKeys(key Kind, n int) []mapKey {
	keys := make([]mapKey, n)
	for i := range keys {
		if key == KindI64 {
			keys[i] = mapKey{k: uint64(i+1) << 32}
			continue
		}
		var sb strings.Builder
		for b := range 17 { // 2^17 > 100k strings of 17 blocks
			if i>>b&1 == 0 {
				sb.WriteString("Aa")
			} else {
				sb.WriteString("BB")
			}
		}
		keys[i] = mapKey{s: sb.String()}
	}
	return keys
}

// floodProbes puts the keys into a map, gets each, deletes each, and
// returns the index slots looked at.
func floodProbes(m *hmap, keys []mapKey) uint64 {
	for i, k := range keys {
		m.put(k, uint64(i))
	}
	for _, k := range keys {
		m.get(k)
	}
	for _, k := range keys {
		m.del(k)
	}
	return m.probes
}

// TestMapFloodingIsLinear: 100k keys that collide by construction under a
// fixed hash cost a bounded number of probes each under the seeded hash
// (a put, a get and a delete each: about 10 slots looked at in all),
// where the fixed hash makes the same operations quadratic. The weak
// runs, on 5k keys (100k would take minutes), show that the count
// detects a collision attack.
func TestMapFloodingIsLinear(t *testing.T) {
	const n = 100_000
	for _, key := range []Kind{KindI64, KindString} {
		t.Run(key.String(), func(t *testing.T) {
			keys := floodKeys(key, n)
			got := floodProbes(newHmap(key, TI64), keys)
			t.Logf("seeded: %d probes for %d keys (%.1f a key)", got, n, float64(got)/n)
			require.Less(t, got, uint64(20*n), "seeded hash: probes per key must stay bounded")

			const w = 5000
			weak := newHmap(key, TI64)
			weak.weak = true
			wp := floodProbes(weak, keys[:w])
			t.Logf("weak: %d probes for %d keys (%.0f a key)", wp, w, float64(wp)/w)
			require.Greater(t, wp, uint64(w*w/4), "the weak hash is quadratic on these keys")
		})
	}
}

// TestMapSeedsDiffer: two maps hash the same key differently (a seed per
// map), so a set of keys that collides in one does not in another.
func TestMapSeedsDiffer(t *testing.T) {
	a, b := newHmap(KindString, TI64), newHmap(KindString, TI64)
	require.NotEqual(t, a.hash(mapKey{s: "x"}), b.hash(mapKey{s: "x"}))
	c, d := newHmap(KindI64, TI64), newHmap(KindI64, TI64)
	require.NotEqual(t, c.hash(mapKey{k: 1}), d.hash(mapKey{k: 1}))
}

// TestMapPutIsBounded: no put of 1M keys looks at more index slots or
// makes more index segments than a small bound, through every rehash
// (the move of the index is spread over the puts), and the index holds
// at most half its slots once a move ends.
func TestMapPutIsBounded(t *testing.T) {
	m := newHmap(KindI64, TI64)
	var most uint64
	moves := 0
	for i := range 1 << 20 {
		before := m.probes
		m.put(mapKey{k: uint64(i)}, 1)
		most = max(most, m.probes-before)
		if m.mig != nil {
			moves = max(moves, m.mig.step)
		}
	}
	t.Logf("most slots one put looked at: %d; most entries one put moved: %d", most, moves)
	require.LessOrEqual(t, moves, 4)
	// The longest probe sequence grows like log n at a bounded load (76
	// seen here); a rehash in one put would look at more than 2^20.
	require.Less(t, most, uint64(256))
	keys := make([]int, 0)
	for pos, _ := m.next(-1); pos >= 0 && len(keys) < 3; pos, _ = m.next(pos) {
		keys = append(keys, int(m.entry(pos).k))
	}
	require.True(t, sort.IntsAreSorted(keys), "insertion order without deletes")
}
