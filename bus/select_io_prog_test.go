//go:build linux

package bus_test

const selIOProg = `
.abi 1.6
; sel_read: connect; wait on case 0 readable(conn), case 1 recv(ch) with
; a deadline of d ns (time.timeout t first when t > 0). Returns
; "read:<bytes>", "chan:<v>", "deadline" or the error kind; then, on
; "chan" and "deadline", reads once more: the bytes after a ":".
.func sel_read(addr:ref, ch:ref, d:i64, tmo:i64) -> ref
  .local c:ref, s:ref, buf:ref, k:i64, n:i64, z:i64, sz:i64, v:i64, e:ref, r:ref, x:ref
  intr  c, net.connect, addr
  const sz, 64
  bnew  buf, sz
  const z, 0
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
  jlei  tmo, 0, w
  intr  _, time.timeout, tmo
w:
  .try  b, bx, h, e
b:
  intr  k, sel.wait, s, d
bx:
  jeqi  k, 0, rd
  jeqi  k, 1, chv
  const r, "deadline"
  jmp   more
chv:
  intr  v, sel.value_i64, s
  const r, "chan"
  jmp   more
rd:
  intr  n, net.read, c, buf, z
  const r, "read:"
  bslice x, buf, z, n
  btos  x, x
  sconcat r, r, x
  ret   r
more:
  intr  n, net.read, c, buf, z
  const x, ":"
  sconcat r, r, x
  bslice x, buf, z, n
  btos  x, x
  sconcat r, r, x
  ret   r
h:
  errkind r, e
  jmp   more
.end

; sel_accept: listen; tell the host the address on ch (as a string
; channel it is a ref channel); wait on case 0 acceptable(l), case 1 the
; drain. Returns "accepted", "drain" or the error kind of the accept.
.func sel_accept(addr:ref, ch:ref) -> ref
  .local l:ref, s:ref, d:ref, k:i64, neg:i64, c:ref, e:ref, r:ref
  intr  l, net.listen, addr
  intr  s, sel.new
  intr  _, sel.acceptable, s, l
  intr  d, chan.drain
  intr  _, sel.recv, s, d
  const neg, -1
  intr  _, chan.send_i64, ch, neg
  intr  k, sel.wait, s, neg
  jeqi  k, 1, dr
  .try  b, bx, h, e
b:
  intr  c, net.accept, l
bx:
  const r, "accepted"
  ret   r
h:
  errkind r, e
  ret   r
dr:
  const r, "drain"
  ret   r
.end

; chan_wins: connect; n times wait on case 0 readable(conn), case 1
; recv(ch) (the host sends on ch, the socket stays silent); then park in
; a plain receive on done. Returns the number of channel case fires.
.func chan_wins(addr:ref, ch:ref, done:ref, n:i64) -> i64
  .local c:ref, s:ref, k:i64, neg:i64, wins:i64, v:i64
  intr  c, net.connect, addr
  const neg, -1
  const wins, 0
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
loop:
  jeqi  n, 0, park
  intr  k, sel.wait, s, neg
  subi  n, n, 1
  jeqi  k, 0, loop
  addi  wins, wins, 1
  jmp   loop
park:
  intr  v, chan.recv_i64, done
  ret   wins
.end

; closed_case: connect; add a readable case; close the connection;
; wait: the case fires at once, and the read after it throws. Returns
; the error kind of the read.
.func closed_case(addr:ref) -> ref
  .local c:ref, s:ref, buf:ref, k:i64, neg:i64, z:i64, n:i64, e:ref, r:ref
  intr  c, net.connect, addr
  const z, 8
  bnew  buf, z
  const z, 0
  const neg, -1
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, net.close, c
  intr  k, sel.wait, s, neg
  .try  b, bx, h, e
b:
  intr  n, net.read, c, buf, z
bx:
  const r, "read"
  ret   r
h:
  errkind r, e
  ret   r
.end

; fair: connect; wait once for the socket to become readable (its
; bytes are never read, so it stays readable), then n times on case 0
; readable(conn), case 1 recv(ch) (ch holds n values): returns how often
; the socket's case fired.
.func fair(addr:ref, ch:ref, n:i64) -> i64
  .local c:ref, s:ref, r:ref, k:i64, neg:i64, hits:i64, v:i64
  intr  c, net.connect, addr
  const neg, -1
  intr  r, sel.new
  intr  _, sel.readable, r, c
  intr  k, sel.wait, r, neg
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
  const hits, 0
loop:
  jeqi  n, 0, out
  subi  n, n, 1
  intr  k, sel.wait, s, neg
  jeqi  k, 1, loop
  addi  hits, hits, 1
  jmp   loop
out:
  ret   hits
.end

; hammer: connect; count the bytes read and the sum of the values
; received on ch until both the stream's end and the channel's: the read
; case and the receive case race at every wait. Returns
; bytes*1048576 + sum.
.func hammer(addr:ref, ch:ref) -> i64
  .local c:ref, s:ref, s2:ref, buf:ref, k:i64, n:i64, z:i64, sz:i64, neg:i64
  .local total:i64, sum:i64, v:i64, x:i64, eof:i64, cl:i64
  intr  c, net.connect, addr
  const sz, 1500
  bnew  buf, sz
  const z, 0
  const neg, -1
  const total, 0
  const sum, 0
  const eof, 0
  const cl, 0
  intr  s, sel.new
  intr  _, sel.readable, s, c
  intr  _, sel.recv, s, ch
  intr  s2, sel.new
  intr  _, sel.recv, s2, ch
loop:
  jeqi  eof, 1, chonly
  jeqi  cl, 1, rdonly
  intr  k, sel.wait, s, neg
  jeqi  k, 0, rd
  intr  x, sel.closed, s
  jeqi  x, 1, setcl
  intr  v, sel.value_i64, s
  add   sum, sum, v
  jmp   loop
setcl:
  const cl, 1
  jmp   loop
rd:
  intr  n, net.read, c, buf, z
  jeqi  n, 0, seteof
  add   total, total, n
  jmp   loop
seteof:
  const eof, 1
  jmp   loop
rdonly:
  intr  n, net.read, c, buf, z
  jeqi  n, 0, done
  add   total, total, n
  jmp   rdonly
chonly:
  jeqi  cl, 1, done
  intr  k, sel.wait, s2, neg
  intr  x, sel.closed, s2
  jeqi  x, 1, done
  intr  v, sel.value_i64, s2
  add   sum, sum, v
  jmp   chonly
done:
  muli  total, total, 1048576
  add   total, total, sum
  ret   total
.end
`
