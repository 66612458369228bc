//go:build linux

package uring

import (
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jadevm/jade/internal/evpoll"
	"golang.org/x/sys/unix"
)

// BenchmarkWake measures Wake → Wait return: a helper goroutine calls
// Wake and spins until the waiter (the benchmark goroutine, blocked in
// Wait(-1) on a locked thread) has returned. One op is one full
// cross-thread wake round trip; p50/p99 are Wake call → Wait return.
//
//	go test -run '^$' -bench 'Wake|Echo|Topology' -benchtime 2s ./uring
func BenchmarkWake(b *testing.B) {
	for _, c := range backendCases {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			be := openCase(b, c, nil)
			defer be.Close()
			var ack, returned atomic.Int64
			lat := make([]time.Duration, b.N)
			var out [4]evpoll.Completion
			base := time.Now()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := int64(0); i < int64(b.N); i++ {
					t0 := time.Since(base)
					if err := be.Wake(); err != nil {
						b.Error(err)
						return
					}
					for ack.Load() <= i {
					}
					lat[i] = time.Duration(returned.Load()) - t0
				}
			}()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for {
					n, err := be.Wait(-1, out[:])
					if err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						break // woken
					}
				}
				returned.Store(int64(time.Since(base)))
				ack.Add(1)
			}
			<-done
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(be.Stats().Syscalls)/float64(b.N), "syscalls/op")
		})
	}
}

// echoPair is a loopback connection with both ends on one backend.
type echoPair struct {
	be        evpoll.Backend
	lfd, a, z int // listener, client end, server end
	out       [8]evpoll.Completion
	recvA     evpoll.Op
	sendA     evpoll.Op
	recvZ     evpoll.Op
	sendZ     evpoll.Op
	msg, bufZ []byte
	bufA      []byte
	tok       evpoll.Token
}

func newEchoPair(tb testing.TB, be evpoll.Backend, size int) *echoPair {
	p := &echoPair{be: be, msg: make([]byte, size), bufZ: make([]byte, size), bufA: make([]byte, size)}
	lfd, err := sockets.Listen("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ap, _ := sockets.LocalAddr(lfd)
	a, err := sockets.Socket(ap)
	if err != nil {
		tb.Fatal(err)
	}
	p.lfd, p.a = lfd, a
	be.Submit(&evpoll.Op{Kind: evpoll.Accept, Fd: lfd}, 1)
	be.Submit(&evpoll.Op{Kind: evpoll.Connect, Fd: a, Addr: ap}, 2)
	p.z = -1
	for got := 0; got < 2; {
		n, err := be.Wait(5*time.Second, p.out[:])
		if err != nil || n == 0 {
			tb.Fatalf("echo setup: n=%d err=%v", n, err)
		}
		for _, c := range p.out[:n] {
			if c.Res < 0 {
				tb.Fatalf("echo setup: token %d: %v", c.Token, c.Err())
			}
			if c.Token == 1 {
				p.z = int(c.Res)
			}
			got++
		}
	}
	unix.SetsockoptInt(p.z, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	p.recvA = evpoll.Op{Kind: evpoll.Recv, Fd: p.a, Buf: p.bufA}
	p.sendA = evpoll.Op{Kind: evpoll.Send, Fd: p.a, Buf: p.msg}
	p.recvZ = evpoll.Op{Kind: evpoll.Recv, Fd: p.z, Buf: p.bufZ}
	p.sendZ = evpoll.Op{Kind: evpoll.Send, Fd: p.z, Buf: p.bufZ}
	return p
}

// step submits two ops and waits for both; it reports the first result.
func (p *echoPair) step(tb testing.TB, first, second *evpoll.Op) int32 {
	p.tok += 2
	t1 := p.tok
	if _, err := p.be.Submit(first, t1); err != nil {
		tb.Fatal(err)
	}
	if _, err := p.be.Submit(second, t1+1); err != nil {
		tb.Fatal(err)
	}
	var res int32 = -1
	for got := 0; got < 2; {
		n, err := p.be.Wait(-1, p.out[:])
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range p.out[:n] {
			if c.Res < 0 {
				tb.Fatalf("echo: %v", c.Err())
			}
			if c.Token == t1 {
				res = c.Res
			}
			got++
		}
	}
	return res
}

func (p *echoPair) roundTrip(tb testing.TB) {
	n := p.step(tb, &p.recvZ, &p.sendA) // server receives what the client sends
	p.sendZ.Buf = p.bufZ[:n]
	if m := p.step(tb, &p.recvA, &p.sendZ); m != n { // and echoes it back
		tb.Fatalf("echo: %d of %d bytes back", m, n)
	}
}

func (p *echoPair) close() {
	for _, fd := range []int{p.a, p.z, p.lfd} {
		p.be.Submit(&evpoll.Op{Kind: evpoll.Close, Fd: fd}, 0)
	}
	p.be.Wait(time.Second, p.out[:])
}

// BenchmarkEchoRoundTrip: one loopback connection, both ends on the
// backend, 64-byte messages; one op is client send → server recv → server
// send → client recv (four ops, two Waits of two completions each). The
// gonet row is the same exchange with Go's net package and two goroutines.
func BenchmarkEchoRoundTrip(b *testing.B) {
	const size = 64
	for _, c := range backendCases {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			be := openCase(b, c, nil)
			defer be.Close()
			p := newEchoPair(b, be, size)
			defer p.close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.roundTrip(b)
			}
			b.StopTimer()
			st := be.Stats()
			b.ReportMetric(float64(st.Syscalls)/float64(b.N), "syscalls/op")
		})
	}
	b.Run("gonet", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			buf := make([]byte, size)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		msg, back := make([]byte, size), make([]byte, size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c.Write(msg)
			if _, err := io.ReadFull(c, back); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTopology compares the two ring topologies on the submission
// path: GOMAXPROCS goroutines each submit a NOP and reap, either on a ring
// of their own (owner-thread rings, SINGLE_ISSUER|DEFER_TASKRUN) or all on
// one shared ring (mutex, no single-issuer flags). NOPs complete inside the
// submitting io_uring_enter, so this isolates ring contention.
func BenchmarkTopology(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	run := func(b *testing.B, shared *Ring) {
		var done atomic.Int64
		var wg sync.WaitGroup
		total := int64(b.N)
		b.ResetTimer()
		for g := 0; g < procs; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				be := shared
				if be == nil { // per-worker: opened, used and closed on this thread
					r, err := OpenRing(Options{OwnerThread: true, Entries: 64})
					if err != nil {
						b.Error(err)
						return
					}
					defer r.Close()
					be = r
				}
				var out [16]evpoll.Completion
				op := &evpoll.Op{Kind: evpoll.Nop}
				for i := int64(g); i < total; i += int64(procs) {
					if _, err := be.Submit(op, 1); err != nil {
						b.Error(err)
						return
					}
					n, _ := be.Wait(time.Millisecond, out[:])
					done.Add(int64(n))
				}
				for done.Load() < total {
					n, _ := be.Wait(time.Millisecond, out[:])
					done.Add(int64(n))
				}
			}()
		}
		wg.Wait()
	}
	b.Run("per-worker", func(b *testing.B) { run(b, nil) })
	b.Run("shared", func(b *testing.B) {
		r, err := OpenRing(Options{Entries: 64})
		if err != nil {
			b.Skip(err)
		}
		defer r.Close()
		run(b, r)
	})
}
