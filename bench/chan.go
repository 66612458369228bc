package bench

import (
	"fmt"
	"time"

	"github.com/jadevm/jade"
	"github.com/jadevm/jade/vmloop"
)

// The channel scenarios of `jade perf`: the Jade programs (ABI 1.5 chan.*
// and sel.*) and their goroutine baselines over Go channels of the same
// shape. Every value is an i64; each body checks what it received.

// ChanCap is the capacity of the channel of chan_stream and chan_fan_in.
const ChanCap = 1024

// FanInProducers is chan_fan_in's number of producers.
const FanInProducers = 100

const srcChans = `
.abi 1.5
; pingpong: n round trips of one i64 each way between this task and a
; ponger over two rendezvous channels; returns the last value back.
.func pingpong(n:i64) -> i64
  .local a:ref, b:ref, z:i64, t:ref, i:i64, v:i64
  const z, 0
  intr  a, chan.new_i64, z
  intr  b, chan.new_i64, z
  spawn t, ponger, a, b, n
  const i, 0
  const v, 0
loop:
  jge   i, n, done
  intr  _, chan.send_i64, a, i
  intr  v, chan.recv_i64, b
  addi  i, i, 1
  jmp   loop
done:
  joinv t
  ret   v
.end

.func ponger(a:ref, b:ref, n:i64) -> void
  .local i:i64, v:i64
  const i, 0
loop:
  jge   i, n, done
  intr  v, chan.recv_i64, a
  intr  _, chan.send_i64, b, v
  addi  i, i, 1
  jmp   loop
done:
  retv
.end

; stream: this task sends 0..n-1 through a channel of capacity cap to a
; consumer task, closes it and returns the consumer's sum.
.func stream(n:i64, cap:i64) -> i64
  .local ch:ref, t:ref, i:i64, s:i64
  intr  ch, chan.new_i64, cap
  spawn t, consume, ch
  const i, 0
loop:
  jge   i, n, done
  intr  _, chan.send_i64, ch, i
  addi  i, i, 1
  jmp   loop
done:
  intr  _, chan.close, ch
  joini s, t
  ret   s
.end

.func consume(ch:ref) -> i64
  .local s:i64, v:i64, e:ref
  const s, 0
  .try  b, x, h, e
b:
  intr  v, chan.recv_i64, ch
x:
  add   s, s, v
  jmp   b
h:
  ret   s
.end

; fanin: p producer tasks each send 0..m-1 through one channel of
; capacity cap; this task receives the p*m values and returns their sum.
.func fanin(p:i64, m:i64, cap:i64) -> i64
  .local ch:ref, t:ref, i:i64, k:i64, s:i64, v:i64
  intr  ch, chan.new_i64, cap
  const i, 0
spawn:
  jge   i, p, spawned
  spawn t, produce, ch, m
  free  t
  addi  i, i, 1
  jmp   spawn
spawned:
  mul   k, p, m
  const i, 0
  const s, 0
loop:
  jge   i, k, done
  intr  v, chan.recv_i64, ch
  add   s, s, v
  addi  i, i, 1
  jmp   loop
done:
  ret   s
.end

.func produce(ch:ref, m:i64) -> void
  .local i:i64
  const i, 0
loop:
  jge   i, m, done
  intr  _, chan.send_i64, ch, i
  addi  i, i, 1
  jmp   loop
done:
  retv
.end

; select4: a select of four receive cases whose third channel holds n
; messages; returns the ns the n waits took (-1: a wait chose another
; case or the values were wrong).
.func select4(n:i64) -> i64
  .local a:ref, b:ref, c:ref, d:ref, s:ref, i:i64, k:i64, v:i64, sum:i64, neg:i64, t0:i64, t1:i64
  intr  a, chan.new_i64, n
  intr  b, chan.new_i64, n
  intr  c, chan.new_i64, n
  intr  d, chan.new_i64, n
  intr  s, sel.new
  intr  _, sel.recv, s, a
  intr  _, sel.recv, s, b
  intr  _, sel.recv, s, c
  intr  _, sel.recv, s, d
  const i, 0
fill:
  jge   i, n, filled
  intr  _, chan.send_i64, c, i
  addi  i, i, 1
  jmp   fill
filled:
  const neg, -1
  const sum, 0
  const i, 0
  intr  t0, time.now
loop:
  jge   i, n, done
  intr  k, sel.wait, s, neg
  jnei  k, 2, bad
  intr  v, sel.value_i64, s
  add   sum, sum, v
  addi  i, i, 1
  jmp   loop
done:
  intr  t1, time.now
  sub   t1, t1, t0
  ret   t1
bad:
  ret   neg
.end

; fill: sends 0..n-1 on ch (buffered, capacity >= n) and returns.
.func fill(ch:ref, n:i64) -> i64
  .local i:i64
  const i, 0
loop:
  jge   i, n, done
  intr  _, chan.send_i64, ch, i
  addi  i, i, 1
  jmp   loop
done:
  ret   i
.end
`

// sumTo is 0 + 1 + … + (m-1).
func sumTo(m int) int64 { return int64(m) * int64(m-1) / 2 }

// ChanPingPongJade makes n round trips of one i64 each way between two
// tasks over two rendezvous channels.
func (e *Env) ChanPingPongJade(n int) error {
	v, err := e.RunFunc("chans", "pingpong", vmloop.I64(int64(n)))
	if err == nil && v != int64(n-1) {
		err = fmt.Errorf("bench: chan_ping_pong: last value %d, want %d", v, n-1)
	}
	return err
}

// ChanPingPongGo makes n round trips of one int64 each way between two
// goroutines over two unbuffered channels.
func ChanPingPongGo(n int) {
	a, b := make(chan int64), make(chan int64)
	go func() {
		for i := 0; i < n; i++ {
			b <- <-a
		}
	}()
	var v int64
	for i := 0; i < n; i++ {
		a <- int64(i)
		v = <-b
	}
	if v != int64(n-1) {
		panic("bench: chan ping-pong: wrong value")
	}
}

// ChanStreamJade sends n i64 values from one task to another through a
// channel of capacity ChanCap.
func (e *Env) ChanStreamJade(n int) error {
	v, err := e.RunFunc("chans", "stream", vmloop.I64(int64(n)), vmloop.I64(ChanCap))
	if err == nil && v != sumTo(n) {
		err = fmt.Errorf("bench: chan_stream: sum %d, want %d", v, sumTo(n))
	}
	return err
}

// ChanStreamGo sends n int64 values from one goroutine to another through
// a channel of capacity ChanCap.
func ChanStreamGo(n int) {
	ch := make(chan int64, ChanCap)
	sum := make(chan int64)
	go func() {
		var s int64
		for v := range ch {
			s += v
		}
		sum <- s
	}()
	for i := 0; i < n; i++ {
		ch <- int64(i)
	}
	close(ch)
	if <-sum != sumTo(n) {
		panic("bench: chan stream: wrong sum")
	}
}

// ChanFanInJade: FanInProducers tasks each send m i64 values through one
// channel of capacity ChanCap to the task that spawned them.
func (e *Env) ChanFanInJade(m int) error {
	want := FanInProducers * sumTo(m)
	v, err := e.RunFunc("chans", "fanin", vmloop.I64(FanInProducers), vmloop.I64(int64(m)), vmloop.I64(ChanCap))
	if err == nil && v != want {
		err = fmt.Errorf("bench: chan_fan_in: sum %d, want %d", v, want)
	}
	return err
}

// ChanFanInGo: FanInProducers goroutines each send m int64 values through
// one channel of capacity ChanCap to one receiver.
func ChanFanInGo(m int) {
	ch := make(chan int64, ChanCap)
	for p := 0; p < FanInProducers; p++ {
		go func() {
			for i := 0; i < m; i++ {
				ch <- int64(i)
			}
		}()
	}
	var s int64
	for k := 0; k < FanInProducers*m; k++ {
		s += <-ch
	}
	if s != FanInProducers*sumTo(m) {
		panic("bench: chan fan-in: wrong sum")
	}
}

// Select4Jade waits n times on a select of four receive cases of which
// one holds a message each time, and returns the time the waits took
// (the channel is filled before the clock starts).
func (e *Env) Select4Jade(n int) (time.Duration, error) {
	v, err := e.RunFunc("chans", "select4", vmloop.I64(int64(n)))
	if err == nil && v < 0 {
		err = fmt.Errorf("bench: select4: a wait chose a case that was not ready")
	}
	return time.Duration(v), err
}

// Select4Go is Select4Jade over Go channels and a select statement.
func Select4Go(n int) time.Duration {
	a, b, c, d := make(chan int64, n), make(chan int64, n), make(chan int64, n), make(chan int64, n)
	for i := 0; i < n; i++ {
		c <- int64(i)
	}
	var s int64
	t0 := time.Now()
	for i := 0; i < n; i++ {
		select {
		case v := <-a:
			s -= v + 1
		case v := <-b:
			s -= v + 1
		case v := <-c:
			s += v
		case v := <-d:
			s -= v + 1
		}
	}
	el := time.Since(t0)
	if s != sumTo(n) {
		panic("bench: select4: a case that was not ready fired")
	}
	return el
}

// ChanBufferedJade fills a channel of capacity n with n i64 messages from
// a task and returns the Go heap (and stacks) they hold, per message.
func (e *Env) ChanBufferedJade(n int) (float64, error) {
	ch, err := e.RT.NewChan(jade.ChanI64, n)
	if err != nil {
		return 0, err
	}
	heap0 := settledInUse()
	if _, err := e.RunFunc("chans", "fill", ch, vmloop.I64(int64(n))); err != nil {
		return 0, err
	}
	per := float64(inUse()-heap0) / float64(n)
	if err := e.RT.CloseChan(ch); err != nil {
		return 0, err
	}
	return per, nil
}

// ChanBufferedGo is ChanBufferedJade for a Go channel of int64 made and
// filled by a goroutine.
func ChanBufferedGo(n int) float64 {
	heap0 := settledInUse()
	done := make(chan chan int64)
	go func() {
		ch := make(chan int64, n)
		for i := 0; i < n; i++ {
			ch <- int64(i)
		}
		done <- ch
	}()
	ch := <-done
	per := float64(inUse()-heap0) / float64(n)
	if len(ch) != n {
		panic("bench: buffered: wrong length")
	}
	return per
}

// settledInUse is inUse once the cleanups and finalizers a collection
// queued (a runtime closed just before) have run and been collected.
func settledInUse() int64 {
	prev := inUse()
	for i := 0; i < 5; i++ {
		time.Sleep(time.Millisecond)
		cur := inUse()
		if cur >= prev {
			return cur
		}
		prev = cur
	}
	return prev
}
