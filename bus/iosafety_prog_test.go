//go:build linux

package bus_test

// The hostile shapes of the I/O safety probe: tasks that end (or are
// cancelled, or time out) with an operation in flight must never let that
// operation touch another connection, and a timed-out operation either did
// its work or did nothing.
const safetyProg = `
.abi 1.2
.func serve(addr:ref) -> void
  .local l:ref, c:ref, t:ref
  intr l, net.listen, addr
acc:
  intr c, net.accept, l
  spawn t, echo, c
  free t
  free c
  jmp acc
.end
.func echo(c:ref) -> i64
  .local buf:ref, n:i64, z:i64, sz:i64, e:ref
  .try b, x, h, e
  const sz, 256
  bnew buf, sz
  const z, 0
b:
loop:
  intr n, net.read, c, buf, z
  jeqi n, 0, eof
  intr _, net.write, c, buf, z, n
  jmp loop
eof:
  intr _, net.close, c
x:
  ret z
h:
  ret z
.end
; thief connects to a silent peer and reads under a timeout it does not
; catch: it ends (TimeoutError) right after its read was cancelled.
.func thief(addr:ref, d:i64) -> i64
  .local c:ref, buf:ref, n:i64, z:i64, sz:i64
  intr c, net.connect, addr
  const sz, 16
  bnew buf, sz
  const z, 0
  intr _, time.timeout, d
  intr n, net.read, c, buf, z
  ret n
.end
; reader connects and reads until cancelled.
.func reader(addr:ref) -> i64
  .local c:ref, buf:ref, n:i64, z:i64, sz:i64
  intr c, net.connect, addr
  const sz, 16
  bnew buf, sz
  const z, 0
  intr n, net.read, c, buf, z
  ret n
.end
; count reads from the connection it accepts, each read under timeout d,
; until EOF, and returns the bytes it got.
.func count(addr:ref, d:i64) -> i64
  .local l:ref, c:ref, buf:ref, n:i64, z:i64, sz:i64, total:i64, e:ref, k:ref, to:ref, is:i64
  intr l, net.listen, addr
  intr c, net.accept, l
  const sz, 4096
  bnew buf, sz
  const z, 0
  const total, 0
  const to, "TimeoutError"
loop:
  .try b, x, h, e
b:
  intr _, time.timeout, d
  intr n, net.read, c, buf, z
x:
  jeqi n, 0, done
  add total, total, n
  jmp loop
h:
  errkind k, e
  seq is, k, to
  jz is, rethrow
  jmp loop
done:
  ret total
rethrow:
  throw e
.end
; send_all connects and writes total bytes in chunks of sz, each write
; under timeout d, retrying the rest of a chunk only when its write timed
; out; it returns the bytes the writes reported.
.func send_all(addr:ref, d:i64, total:i64, sz:i64) -> i64
  .local c:ref, buf:ref, n:i64, z:i64, sent:i64, e:ref, k:ref, to:ref, is:i64, left:i64
  intr c, net.connect, addr
  bnew buf, sz
  const z, 0
  const sent, 0
  const to, "TimeoutError"
loop:
  sub left, total, sent
  jlei left, 0, done
  jlt left, sz, tail
  mov left, sz
tail:
  .try b, x, h, e
b:
  intr _, time.timeout, d
  intr n, net.write, c, buf, z, left
x:
  add sent, sent, n
  jmp loop
h:
  errkind k, e
  seq is, k, to
  jz is, rethrow
  jmp loop
done:
  intr _, net.close, c
  ret sent
rethrow:
  throw e
.end
; close_at_limit connects twice, leaves a child reading the second
; connection (the engine's one in-flight operation), then closes the first:
; its Close operation cannot be submitted.
.func close_at_limit(addr:ref) -> i64
  .local c1:ref, c2:ref, t:ref, z:i64, ms:i64
  intr c1, net.connect, addr
  intr c2, net.connect, addr
  spawn t, reader_on, c2
  const ms, 20000000
  intr _, time.sleep, ms
  intr _, net.close, c1
  const z, 0
  ret z
.end
.func reader_on(c:ref) -> i64
  .local buf:ref, n:i64, z:i64, sz:i64
  const sz, 16
  bnew buf, sz
  const z, 0
  intr n, net.read, c, buf, z
  ret n
.end
; stale_conn hands a connection to a reading child, then uses its own
; copy: a write (doclose 0) or a close (1). Both must be refused.
.func stale_conn(addr:ref, doclose:i64) -> ref
  .local c:ref, t:ref, s:ref, e:ref, buf:ref, z:i64, one:i64
  intr c, net.connect, addr
  spawn t, read_kind, c
  const z, 0
  const one, 1
  bnew buf, one
  .try b, x, h, e
b:
  jnz doclose, close
  intr _, net.write, c, buf, z, one
  jmp x
close:
  intr _, net.close, c
x:
  const s, "the parent's copy worked"
  cancel t
  ret s
h:
  cancel t
  errmsg s, e
  ret s
.end
; stale_file is stale_conn for a file held by a waiting child.
.func stale_file(path:ref) -> ref
  .local f:ref, t:ref, s:ref, e:ref, buf:ref, z:i64, one:i64, ev:ref
  const one, 1
  intr f, file.open, path, one
  evnew ev
  spawn t, hold, f, ev
  const z, 0
  bnew buf, one
  .try b, x, h, e
b:
  intr _, file.write, f, buf, z, one
x:
  const s, "the parent's copy worked"
  cancel t
  ret s
h:
  cancel t
  errmsg s, e
  ret s
.end
.func hold(f:ref, ev:ref) -> i64
  .local z:i64
  evwait ev
  const z, 0
  ret z
.end
.func read_kind(c:ref) -> ref
  .local buf:ref, n:i64, z:i64, sz:i64, e:ref, s:ref
  const sz, 16
  bnew buf, sz
  const z, 0
  .try b, x, h, e
b:
  intr n, net.read, c, buf, z
x:
  const s, "read"
  ret s
h:
  errmsg s, e
  ret s
.end
; accept_one accepts (and closes) one probe connection, then waits in a
; second accept, which it keeps.
.func accept_one(addr:ref) -> i64
  .local l:ref, c:ref, z:i64
  intr l, net.listen, addr
  intr c, net.accept, l
  intr _, net.close, c
  intr c, net.accept, l
  const z, 0
  ret z
.end
; churn opens path n times, handing each handle to a child that closes it:
; the long-lived task keeps nothing per handle.
.func churn(path:ref, n:i64) -> i64
  .local f:ref, t:ref, z:i64, i:i64, v:i64
  const z, 0
  const i, 0
loop:
  jge i, n, done
  intr f, file.open, path, z
  spawn t, close_it, f
  joini v, t
  free t
  free f
  addi i, i, 1
  jmp loop
done:
  evnew f
  evwait f                    ; stays alive until cancelled
  ret i
.end
.func close_it(f:ref) -> i64
  .local z:i64
  intr _, file.close, f
  const z, 0
  ret z
.end
`

const abandonHog = `
.func hog() -> void
l:
  jmp l
.end
`
