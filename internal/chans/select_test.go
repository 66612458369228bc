package chans

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// fakeSel is a SelWaiter whose wait is one flag: the first WakeCase of a
// wait wins.
type fakeSel struct {
	armed bool
	fired int
	r     Result
}

func (f *fakeSel) Arm()       { f.armed, f.fired = true, -1 }
func (f *fakeSel) Live() bool { return f.armed }
func (f *fakeSel) WakeCase(i int, r Result) bool {
	if !f.armed {
		return false
	}
	f.armed, f.fired, f.r = false, i, r
	return true
}

func newChans(t *testing.T, n int, capacity int64) []*Chan {
	var cs []*Chan
	for range n {
		c, err := New(ElemI64, capacity)
		require.NoError(t, err)
		cs = append(cs, c)
	}
	return cs
}

// TestSelectNoAllocs: a wait over four receive cases, one ready, and a
// wait that parks on four cases and is woken by a send, allocate nothing
// in steady state.
func TestSelectNoAllocs(t *testing.T) {
	cs := newChans(t, 4, 1<<20)
	s := NewSelect()
	for _, c := range cs {
		s.Recv(c)
	}
	const rounds = 1000
	for i := range rounds + 10 {
		sent, err := cs[2].Send(msg(t, int64(i), nil), nil, nil)
		require.NoError(t, err)
		require.True(t, sent)
	}
	allocs := testing.AllocsPerRun(rounds, func() {
		f, err := s.Wait(nil, nil)
		if err != nil || f.Case != 2 || f.Msg == nil {
			t.Fatalf("wait: %+v %v", f, err)
		}
	})
	require.Zero(t, allocs, "a ready select")

	empty := newChans(t, 4, 0)
	ps := NewSelect()
	for _, c := range empty {
		ps.Recv(c)
	}
	w := &fakeSel{}
	msgs := make([]*Msg, 2*rounds)
	for i := range msgs {
		msgs[i] = msg(t, int64(i), nil)
	}
	k := 0
	allocs = testing.AllocsPerRun(rounds, func() {
		f, err := ps.Wait(w, nil)
		if err != nil || f.Case != -1 {
			t.Fatalf("wait: %+v %v", f, err)
		}
		sent, err := empty[k%4].Send(msgs[k], nil, nil)
		if err != nil || !sent || w.fired != k%4 || w.r.Msg != msgs[k] {
			t.Fatalf("send %d: %v %v, fired %d", k, sent, err, w.fired)
		}
		k++
	})
	require.Zero(t, allocs, "a parked select")
}

// TestSelectLosersKeep: a send case that lost leaves nothing in its
// channel, and a receive case that lost leaves the channel's message; a
// stale entry of a lost case passes nothing.
func TestSelectLosersKeep(t *testing.T) {
	cs := newChans(t, 2, 1)
	s := NewSelect()
	s.Recv(cs[0])
	i := s.Send(cs[1])
	require.NoError(t, s.SetMsg(i, msg(t, 7, nil)))
	w := &fakeSel{}
	// cs[1] full: neither case is ready; park, then a send on cs[0] wins.
	sent, err := cs[1].Send(msg(t, 1, nil), nil, nil)
	require.NoError(t, err)
	require.True(t, sent)
	f, err := s.Wait(w, nil)
	require.NoError(t, err)
	require.Equal(t, -1, f.Case)
	sent, err = cs[0].Send(msg(t, 5, nil), nil, nil)
	require.NoError(t, err)
	require.True(t, sent)
	require.Equal(t, 0, w.fired)
	require.Equal(t, int64(5), w.r.Msg.Value().Int())
	// The send case lost: a receive on cs[1] takes the buffered 1, and
	// the stale entry does not move 7 into the buffer.
	m, err := cs[1].Recv(nil, nil)
	require.NoError(t, err)
	require.Equal(t, int64(1), m.Value().Int())
	require.Zero(t, cs[1].Len(), "the losing send case enqueued nothing")
	require.NotNil(t, s.Msg(i), "the send case keeps its message")
}

// TestSelectSpentSendEntry: a send case's entry left in its channel's
// queue by a wait that another case won is met again in a later wait (a
// select's entries are its own, reused by every wait). Once the case's
// message was sent (by that wait, or by a second entry of the same case),
// the entry offers nothing: a receiver skips it — also while the select
// waits again with the case spent — and takes no message from it.
func TestSelectSpentSendEntry(t *testing.T) {
	cs := newChans(t, 2, 1)
	s := NewSelect()
	s.Recv(cs[0])
	i := s.Send(cs[1])
	require.NoError(t, s.SetMsg(i, msg(t, 7, nil)))
	w := &fakeSel{}
	sent, err := cs[1].Send(msg(t, 1, nil), nil, nil) // cs[1] is full
	require.NoError(t, err)
	require.True(t, sent)
	// Wait 1 parks both cases; the receive case wins. The send case's
	// entry stays in cs[1]'s queue.
	f, err := s.Wait(w, nil)
	require.NoError(t, err)
	require.Equal(t, -1, f.Case)
	sent, err = cs[0].Send(msg(t, 5, nil), nil, nil)
	require.NoError(t, err)
	require.True(t, sent)
	require.Equal(t, 0, w.fired)
	// Wait 2 parks both again: cs[1]'s queue holds the send case twice. A
	// receive on cs[1] frees a place: the first entry sends 7.
	f, err = s.Wait(w, nil)
	require.NoError(t, err)
	require.Equal(t, -1, f.Case)
	m, err := cs[1].Recv(nil, nil)
	require.NoError(t, err)
	require.Equal(t, int64(1), m.Value().Int())
	require.Equal(t, i, w.fired)
	s.Sent(i)
	// Wait 3 with the send case spent: only the receive case parks. The
	// second entry of the send case is met while wait 3 is live: it must
	// not fire the spent case, nor offer a message.
	f, err = s.Wait(w, nil)
	require.NoError(t, err)
	require.Equal(t, -1, f.Case)
	m, err = cs[1].Recv(nil, nil)
	require.NoError(t, err)
	require.Equal(t, int64(7), m.Value().Int())
	require.True(t, w.Live(), "the spent send case fired")
	m, err = cs[1].Recv(nil, nil)
	require.NoError(t, err)
	require.Nil(t, m, "a message out of a spent send case's entry")
	require.Zero(t, cs[1].Len())
	// The wait goes on: a send on cs[0] ends it.
	sent, err = cs[0].Send(msg(t, 6, nil), nil, nil)
	require.NoError(t, err)
	require.True(t, sent)
	require.Equal(t, 0, w.fired)
	require.Equal(t, int64(6), w.r.Msg.Value().Int())
}

// TestSelectRandom: with three ready cases each is chosen about a third
// of the time.
func TestSelectRandom(t *testing.T) {
	cs := newChans(t, 3, 1<<20)
	s := NewSelect()
	for _, c := range cs {
		s.Recv(c)
	}
	const n = 3000
	for i := range n {
		for _, c := range cs {
			_, err := c.Send(&Msg{kind: vmloop.KindI64, bits: uint64(i)}, nil, nil)
			require.NoError(t, err)
		}
	}
	var hits [3]int
	for range n {
		f, err := s.Wait(nil, nil)
		require.NoError(t, err)
		hits[f.Case]++
	}
	for i, h := range hits {
		require.InDelta(t, n/3, h, n/10, "case %d chosen %d times of %d: %v", i, h, n, hits)
	}
}

// BenchmarkSelect4Ready: a wait over four receive cases of which one
// holds messages (the select4 shape, without the bytecode around it).
func BenchmarkSelect4Ready(b *testing.B) {
	var cs []*Chan
	for range 4 {
		c, _ := New(ElemI64, int64(b.N)+1)
		cs = append(cs, c)
	}
	s := NewSelect()
	for _, c := range cs {
		s.Recv(c)
	}
	for i := range b.N {
		_, _ = cs[1].Send(&Msg{kind: vmloop.KindI64, bits: uint64(i)}, nil, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if f, _ := s.Wait(nil, nil); f.Case != 1 {
			b.Fatal(f)
		}
	}
}
