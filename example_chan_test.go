package jade_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jadevm/jade"
)

// The host feeds a task through one channel and reads its results from
// another: the task squares every number it receives until the input is
// closed, then closes its output.
func ExampleRuntime_NewChan() {
	rt, err := jade.New(jade.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Close(context.Background())
	p, err := rt.Load("square.jasm", []byte(`.abi 1.5
.func squarer(in:ref, out:ref) -> void
  .local v:i64, e:ref
  .try  b, x, done, e
b:
  intr  v, chan.recv_i64, in   ; ClosedError once in is closed and drained
x:
  mul   v, v, v
  intr  _, chan.send_i64, out, v
  jmp   b
done:
  intr  _, chan.close, out
  retv
.end`))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	in, _ := rt.NewChan(jade.ChanI64, 4)
	out, _ := rt.NewChan(jade.ChanI64, 4)
	if _, err := rt.Spawn(p, "squarer", in, out); err != nil {
		panic(err)
	}
	for i := int64(1); i <= 3; i++ {
		if err := rt.Send(ctx, in, jade.I64(i)); err != nil {
			panic(err)
		}
	}
	rt.CloseChan(in)
	for {
		v, err := rt.Recv(ctx, out)
		if errors.Is(err, jade.ErrChanClosed) {
			break
		}
		fmt.Println(v.Int())
	}
	// Output:
	// 1
	// 4
	// 9
}
