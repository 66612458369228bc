package bench

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"time"
)

// HTTPProcMain is the body of the hidden command `jade httpproc`, the
// child processes of `jade perf`'s http and http_mixed scenarios:
//
//	httpproc serve -impl jade|nethttp|raw|jade-kv|nethttp-kv [-workers N] [-procs N]
//	    serves the routes of examples/http.jasm (or, for the -kv ones, the
//	    store of examples/kv.jasm) on a free loopback port, prints its
//	    address and serves until stdin ends;
//	httpproc mixed -addr HOST:PORT [-rate R] [-heavy K] [-ms N] [-warmup D] [-duration D]
//	    runs RunHTTPMixed against the server and prints its result as JSON.
func HTTPProcMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return childMain("httpproc", []childMode{
		{"serve", func(a []string) error { return httpServe(a, stdin, stdout, stderr) }},
		{"mixed", func(a []string) error { return httpMixedLoad(a, stdout, stderr) }},
	}, args, stderr)
}

func httpServe(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("httpproc serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	impl := fs.String("impl", "jade", "server: jade (examples/http.jasm), nethttp (Go's net/http), raw (a goroutine per net.Conn), jade-kv (examples/kv.jasm) or nethttp-kv (its store on net/http)")
	workers := fs.Int("workers", 1, "Jade worker threads")
	procs := fs.Int("procs", 0, "GOMAXPROCS of a Go server (0: leave it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var s *EchoServer
	var err error
	switch *impl {
	case "jade":
		s, err = StartJadeHTTP(*workers)
	case "jade-kv":
		s, err = StartJadeKV(*workers)
	case "nethttp", "raw", "nethttp-kv":
		if *procs > 0 {
			runtime.GOMAXPROCS(*procs)
		}
		switch *impl {
		case "raw":
			s, err = StartRawHTTP()
		case "nethttp-kv":
			s, err = StartGoKV()
		default:
			s, err = StartGoHTTP()
		}
	default:
		fmt.Fprintf(stderr, "httpproc serve: -impl %q: jade, nethttp, raw, jade-kv or nethttp-kv\n", *impl)
		return errUsage
	}
	return serveChild("httpproc", s, err, stdin, stdout)
}

func httpMixedLoad(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("httpproc mixed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "the server's `HOST:PORT`")
	rate := fs.Int("rate", 1000, "light GETs of / per second, open loop")
	heavy := fs.Int("heavy", 2, "connections requesting /work back to back")
	ms := fs.Int("ms", 20, "CPU milliseconds per heavy request")
	warmup := fs.Duration("warmup", time.Second, "load before the measured window")
	dur := fs.Duration("duration", 3*time.Second, "the measured window")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" {
		fmt.Fprintln(stderr, "httpproc mixed: -addr is required")
		return errUsage
	}
	m, err := RunHTTPMixed(*addr, *rate, *heavy, *ms, *warmup, *dur)
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("bench: httpproc mixed: encode: %w", err)
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return nil
}
