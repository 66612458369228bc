//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Shapes, named by the byte their messages carry in the header.
const (
	shapeConcurrent = 'a'
	shapeChurn      = 'b'
	shapeSlow       = 'c'
	shapeReset      = 'd'
	shapeHalf       = 'e'
)

// ioTimeout bounds every dial, read and write: a loopback round trip
// takes milliseconds even under load, and a dial that waits longer waits
// on a full listen backlog.
const ioTimeout = 10 * time.Second

// maxFailures is the number of failed connections after which a shape
// starts no more: a server that stopped serving would otherwise cost
// ioTimeout per remaining connection.
const maxFailures = 50

// tally counts the bytes and failures of one shape run.
type tally struct {
	conns     atomic.Int64 // connections made
	sent      atomic.Int64 // bytes written
	echoed    atomic.Int64 // bytes read back and matching what was sent
	abandoned atomic.Int64 // bytes sent on purpose without reading them back (resets)
	failed    atomic.Int64 // connections with an error or a mismatch
	skipped   atomic.Int64 // connections not started after maxFailures
	mu        sync.Mutex
	errs      []string // the first few failures
}

// fail records a failed connection.
func (t *tally) fail(format string, args ...any) {
	if t.failed.Add(1) > 5 {
		return
	}
	t.mu.Lock()
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
	t.mu.Unlock()
}

// dialFailed records a failed dial of connection i of shape, or a skipped
// one.
func (t *tally) dialFailed(shape string, i int, err error) {
	if errors.Is(err, errSkipped) {
		t.skipped.Add(1)
		return
	}
	t.fail("%s%d: %v", shape, i, err)
}

// add accumulates u into t.
func (t *tally) add(u *tally) {
	t.conns.Add(u.conns.Load())
	t.sent.Add(u.sent.Load())
	t.echoed.Add(u.echoed.Load())
	t.abandoned.Add(u.abandoned.Load())
	t.failed.Add(u.failed.Load())
	t.skipped.Add(u.skipped.Load())
	u.mu.Lock()
	defer u.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range u.errs {
		if len(t.errs) < 5 {
			t.errs = append(t.errs, e)
		}
	}
}

// lost is the number of bytes sent, not abandoned, that did not come back
// intact.
func (t *tally) lost() int64 { return t.sent.Load() - t.abandoned.Load() - t.echoed.Load() }

// peer generates the bytes of one connection: every message starts with
// 'J', the shape, the connection's number and the message's sequence (for
// messages of at least 10 bytes), then bytes from a generator seeded with
// the leg, shape and number, so no two connections send the same bytes.
type peer struct {
	shape byte
	id    uint32
	seq   uint32
	rng   *rand.Rand
}

func newPeer(legNo int, shape byte, id int) *peer {
	seed := uint64(legNo)<<40 | uint64(shape)<<32 | uint64(id)
	return &peer{shape: shape, id: uint32(id), rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// msg returns the next message of n bytes.
func (p *peer) msg(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], p.rng.Uint64())
		copy(b[i:], w[:])
	}
	if n >= 10 {
		b[0], b[1] = 'J', p.shape
		binary.BigEndian.PutUint32(b[2:], p.id)
		binary.BigEndian.PutUint32(b[6:], p.seq)
	}
	p.seq++
	return b
}

// mismatch describes bytes that came back different from those sent,
// naming the connection they belong to when they carry a header.
func mismatch(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	s := fmt.Sprintf("%d bytes back differ from those sent at byte %d", len(got), i)
	if len(got) >= 10 && got[0] == 'J' && !bytes.Equal(got[:10], want[:min(10, len(want))]) {
		s += fmt.Sprintf(" (they are message %d of connection %c%d)", binary.BigEndian.Uint32(got[6:]), got[1], binary.BigEndian.Uint32(got[2:]))
	}
	return s
}

// echo writes msg and reads it back.
func echo(c net.Conn, msg []byte, t *tally) error {
	c.SetDeadline(time.Now().Add(ioTimeout))
	n, err := c.Write(msg)
	t.sent.Add(int64(n))
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	got := make([]byte, len(msg))
	n, err = io.ReadFull(c, got)
	if err != nil {
		return fmt.Errorf("read %d of %d bytes back: %w", n, len(msg), err)
	}
	if !bytes.Equal(got, msg) {
		return errors.New(mismatch(got, msg))
	}
	t.echoed.Add(int64(len(msg)))
	return nil
}

// dialer limits the dials in flight: more than the listen backlog at once
// would drop SYNs and make connections wait out a retransmission.
type dialer struct {
	addr string
	sem  chan struct{}
}

// errSkipped is dial's answer once t has maxFailures failures.
var errSkipped = errors.New("skipped")

// dial connects, or returns errSkipped when t has maxFailures failures by
// the time a dial may start.
func (d *dialer) dial(t *tally) (*net.TCPConn, error) {
	d.sem <- struct{}{}
	defer func() { <-d.sem }()
	if t.failed.Load() >= maxFailures {
		return nil, errSkipped
	}
	c, err := net.DialTimeout("tcp", d.addr, ioTimeout)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	return c.(*net.TCPConn), nil
}

// each runs f(i) for i in [0, n) on at most par goroutines (0: n), and
// skips the rest once t has maxFailures failures.
func each(t *tally, n, par int, f func(i int)) {
	if par <= 0 || par > n {
		par = n
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < par; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if t.failed.Load() >= maxFailures {
					t.skipped.Add(1)
					continue
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// concurrent (shape a) opens n connections, holds all of them open, then
// each makes rounds echo round trips of 1 B to 4 KiB (one of 16 KiB). peak
// is called with the number open while all are open.
func concurrent(d *dialer, legNo, n, rounds int, peak func(n int)) *tally {
	t := &tally{}
	conns := make([]*net.TCPConn, n)
	each(t, n, 0, func(i int) {
		c, err := d.dial(t)
		if err != nil {
			t.dialFailed("a", i, err)
			return
		}
		t.conns.Add(1)
		conns[i] = c
	})
	peak(int(t.conns.Load()))
	each(t, n, 0, func(i int) {
		c := conns[i]
		if c == nil {
			return
		}
		defer c.Close()
		if t.failed.Load() >= maxFailures {
			t.skipped.Add(1)
			return
		}
		p := newPeer(legNo, shapeConcurrent, i)
		for r := 0; r < rounds; r++ {
			size := 1 + p.rng.IntN(4096)
			if r == rounds/2 {
				size = 16 << 10
			}
			if err := echo(c, p.msg(size), t); err != nil {
				t.fail("a%d round %d: %v", i, r, err)
				return
			}
		}
	})
	return t
}

// churn (shape b) makes n short connections, par at a time: connect, one
// round trip of 16 B to 1 KiB, close.
func churn(d *dialer, legNo, n, par int) *tally {
	t := &tally{}
	each(t, n, par, func(i int) {
		c, err := d.dial(t)
		if err != nil {
			t.dialFailed("b", i, err)
			return
		}
		t.conns.Add(1)
		defer c.Close()
		p := newPeer(legNo, shapeChurn, i)
		if err := echo(c, p.msg(16+p.rng.IntN(1009)), t); err != nil {
			t.fail("b%d: %v", i, err)
		}
	})
	return t
}

// slowloris (shape c) opens n connections that each send one byte a
// second for dur and read every byte back as it comes, then close.
func slowloris(d *dialer, legNo, n int, dur time.Duration) *tally {
	t := &tally{}
	each(t, n, 0, func(i int) {
		c, err := d.dial(t)
		if err != nil {
			t.dialFailed("c", i, err)
			return
		}
		t.conns.Add(1)
		defer c.Close()
		p := newPeer(legNo, shapeSlow, i)
		msg := p.msg(int(dur/time.Second) + 10) // the header and then a byte a second
		var got [1]byte
		start := time.Now()
		time.Sleep(time.Duration(p.rng.Int64N(int64(time.Second)))) // spread the trickles
		for k := 0; k < len(msg) && time.Since(start) < dur; k++ {
			c.SetDeadline(time.Now().Add(ioTimeout))
			if _, err := c.Write(msg[k : k+1]); err != nil {
				t.fail("c%d byte %d: write: %v", i, k, err)
				return
			}
			t.sent.Add(1)
			if _, err := io.ReadFull(c, got[:]); err != nil {
				t.fail("c%d byte %d: read: %v", i, k, err)
				return
			}
			if got[0] != msg[k] {
				t.fail("c%d byte %d: got %#x, sent %#x", i, k, got[0], msg[k])
				return
			}
			t.echoed.Add(1)
			if k >= 10 { // the header goes at once, the rest trickles
				time.Sleep(time.Second)
			}
		}
	})
	return t
}

// reset (shape d) makes n connections, par at a time: one round trip of
// up to 8 KiB (checked), then 64 KiB written and the connection reset
// (SO_LINGER 0) while the server is still echoing it.
func reset(d *dialer, legNo, n, par int) *tally {
	t := &tally{}
	each(t, n, par, func(i int) {
		c, err := d.dial(t)
		if err != nil {
			t.dialFailed("d", i, err)
			return
		}
		t.conns.Add(1)
		defer c.Close()
		p := newPeer(legNo, shapeReset, i)
		if err := echo(c, p.msg(10+p.rng.IntN(8182)), t); err != nil {
			t.fail("d%d: %v", i, err)
			return
		}
		c.SetDeadline(time.Now().Add(ioTimeout))
		k, _ := c.Write(p.msg(64 << 10))
		t.sent.Add(int64(k))
		t.abandoned.Add(int64(k))
		c.SetLinger(0)
	})
	return t
}

// halfClose (shape e) makes n connections, par at a time: up to 64 KiB
// written, then shutdown(SHUT_WR), then everything must come back followed
// by the server's close (EOF).
func halfClose(d *dialer, legNo, n, par int) *tally {
	t := &tally{}
	each(t, n, par, func(i int) {
		c, err := d.dial(t)
		if err != nil {
			t.dialFailed("e", i, err)
			return
		}
		t.conns.Add(1)
		defer c.Close()
		p := newPeer(legNo, shapeHalf, i)
		msg := p.msg(10 + p.rng.IntN(64<<10))
		c.SetDeadline(time.Now().Add(ioTimeout))
		werr := make(chan error, 1)
		go func() {
			k, err := c.Write(msg)
			t.sent.Add(int64(k))
			if err == nil {
				err = c.CloseWrite()
			}
			werr <- err
		}()
		got, rerr := io.ReadAll(c)
		if err := <-werr; err != nil {
			t.fail("e%d: write: %v", i, err)
			return
		}
		if rerr != nil {
			t.fail("e%d: read %d of %d bytes back before %v (want all, then EOF)", i, len(got), len(msg), rerr)
			return
		}
		if !bytes.Equal(got, msg) {
			t.fail("e%d: %s", i, mismatch(got, msg))
			return
		}
		t.echoed.Add(int64(len(got)))
	})
	return t
}
