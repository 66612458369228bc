// Package examples holds the example programs (*.jasm, run them with
// `jade run`) and embeds the servers among them for the benchmarks and the
// perf harness, which must not depend on the working directory.
package examples

import _ "embed"

// Echo is examples/echo.jasm: a TCP echo server, one task per connection.
//
//go:embed echo.jasm
var Echo []byte

// RespPing is examples/resp_ping.jasm: a Redis RESP PING server.
//
//go:embed resp_ping.jasm
var RespPing []byte

// HTTP is examples/http.jasm: an HTTP/1.1 keep-alive server with the
// routes / and /work?ms=N.
//
//go:embed http.jasm
var HTTP []byte

// Fib is examples/fib.jasm: naive recursive Fibonacci (fib(n), main: 30).
//
//go:embed fib.jasm
var Fib []byte

// Fanout is examples/fanout.jasm: fanout(n) spawns n tasks that yield
// once and joins them (main: 10,000).
//
//go:embed fanout.jasm
var Fanout []byte

// KV is examples/kv.jasm: a key-value store over HTTP/1.1 (GET, PUT and
// DELETE of /k/KEY) on std/http, its data in a map owned by one task.
//
//go:embed kv.jasm
var KV []byte
