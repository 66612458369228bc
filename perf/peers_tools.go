package perf

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The Debian packages the peers need: erlang-base (erl, erlc) for BEAM;
// librust-tokio-dev (tokio and its dependencies under debianRegistry) and
// cargo (with Debian's rustc) for Tokio.
var (
	beamPackages  = []string{"erlang-base"}
	tokioPackages = []string{"librust-tokio-dev", "cargo"}
)

// debianRegistry is the directory Debian's librust-*-dev packages install
// crates into; bench/peers/tokio/.cargo/config.toml builds against it.
const debianRegistry = "/usr/share/cargo/registry"

// peerSources are the files each peer is built from, relative to the
// repository root; their hash keys the build cache.
var peerSources = map[string][]string{
	"beam":  {"bench/peers/beam/jade_peers.erl"},
	"tokio": {"bench/peers/tokio/Cargo.toml", "bench/peers/tokio/.cargo/config.toml", "bench/peers/tokio/src/main.rs"},
}

// FindPeersRoot returns the repository root at or above dir that holds
// the peer sources (bench/peers).
func FindPeersRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("perf: peers: %w", err)
	}
	d := abs
	for {
		if _, err := os.Stat(filepath.Join(d, peerSources["beam"][0])); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("perf: peers: no bench/peers at or above %s: run jade perf --peers inside the repository", abs)
		}
		d = up
	}
}

// missingPackages returns the packages dpkg does not list as installed
// (all of them where dpkg-query is absent: not a Debian system).
func missingPackages(pkgs []string) []string {
	var miss []string
	for _, p := range pkgs {
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output()
		if err != nil || !strings.Contains(string(out), "install ok installed") {
			miss = append(miss, p)
		}
	}
	return miss
}

// aptInstall installs pkgs with apt-get (as root only), refreshing the
// package lists once if the first attempt fails.
func aptInstall(w io.Writer, pkgs []string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("perf: peers: install %s: not root", strings.Join(pkgs, " "))
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("perf: peers: install %s: %w", strings.Join(pkgs, " "), err)
	}
	run := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get %s: %w: %s", args[0], err, lastLines(out, 3))
		}
		return nil
	}
	fmt.Fprintf(w, "peers: apt-get install %s\n", strings.Join(pkgs, " "))
	t0 := time.Now()
	args := append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)
	err := run(args...)
	if err != nil {
		if err = run("update"); err == nil {
			err = run(args...)
		}
	}
	if err != nil {
		return fmt.Errorf("perf: peers: %w", err)
	}
	fmt.Fprintf(w, "peers: installed in %.0fs\n", time.Since(t0).Seconds())
	return nil
}

func lastLines(b []byte, n int) string {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], " | ")
}

// cargoTool picks the cargo to build the Tokio peer with: Debian's
// (/usr/bin/cargo with /usr/bin/rustc, the toolchain its registry's crates
// are packaged for) where installed, else the cargo on PATH.
func cargoTool() (cargo string, env []string, err error) {
	if _, err := os.Stat("/usr/bin/cargo"); err == nil {
		if _, err := os.Stat("/usr/bin/rustc"); err == nil {
			return "/usr/bin/cargo", []string{"RUSTC=/usr/bin/rustc"}, nil
		}
	}
	c, err := exec.LookPath("cargo")
	return c, nil, err
}

// peerTools checks what peer needs, installs its packages when they are
// missing and installing is possible, and returns why the peer cannot run
// (nil: it can).
func peerTools(w io.Writer, peer string) error {
	have := func() error {
		switch peer {
		case "beam":
			for _, t := range []string{"erl", "erlc"} {
				if _, err := exec.LookPath(t); err != nil {
					return fmt.Errorf("%s not found (package erlang-base)", t)
				}
			}
		case "tokio":
			if _, _, err := cargoTool(); err != nil {
				return fmt.Errorf("cargo not found (package cargo)")
			}
			if m, _ := filepath.Glob(filepath.Join(debianRegistry, "tokio-1.*")); len(m) == 0 {
				return fmt.Errorf("no tokio crate in %s (package librust-tokio-dev)", debianRegistry)
			}
		}
		return nil
	}
	pkgs := map[string][]string{"beam": beamPackages, "tokio": tokioPackages}[peer]
	if miss := missingPackages(pkgs); len(miss) > 0 {
		if err := aptInstall(w, miss); err != nil && have() != nil {
			return fmt.Errorf("%w; %w", have(), err)
		}
	}
	return have()
}

// sourceHash hashes a peer's sources and its toolchain's name.
func sourceHash(root, peer, tool string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", tool)
	for _, p := range peerSources[peer] {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return "", fmt.Errorf("perf: peers: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PeerBuild is a built peer: the command line that runs it at a worker
// count, and its runtime's version.
type PeerBuild struct {
	Peer    string
	Version string
	// Command returns the program and arguments that run the peer with
	// workers and the given SHAPE=COUNT arguments.
	Command func(workers int, shapes []string) []string
	// Built is how long the build took; 0 when the cache was current.
	Built time.Duration
}

// BuildPeer builds peer from the sources under root into root/out/peers
// (git-ignored) unless the stamp there says the same sources were built
// already.
func BuildPeer(root, peer string) (*PeerBuild, error) {
	out := filepath.Join(root, "out", "peers")
	var tool, bin string
	var env []string
	var build func() error
	var err error
	switch peer {
	case "beam":
		if tool, err = exec.LookPath("erlc"); err != nil {
			return nil, fmt.Errorf("perf: peers: beam: %w", err)
		}
		dir := filepath.Join(out, "beam")
		bin = filepath.Join(dir, "jade_peers.beam")
		build = func() error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return runQuiet(exec.Command(tool, "-o", dir, filepath.Join(root, peerSources["beam"][0])))
		}
	case "tokio":
		if tool, env, err = cargoTool(); err != nil {
			return nil, fmt.Errorf("perf: peers: tokio: %w", err)
		}
		target := filepath.Join(out, "tokio")
		bin = filepath.Join(target, "release", "jade-peer-tokio")
		build = func() error {
			// cargo reads .cargo/config.toml from its working directory.
			cmd := exec.Command(tool, "build", "--release", "--offline", "--target-dir", target)
			cmd.Dir = filepath.Join(root, "bench", "peers", "tokio")
			cmd.Env = append(os.Environ(), env...)
			return runQuiet(cmd)
		}
	default:
		return nil, fmt.Errorf("perf: peers: unknown peer %q", peer)
	}
	hash, err := sourceHash(root, peer, tool)
	if err != nil {
		return nil, err
	}
	pb := &PeerBuild{Peer: peer}
	stamp := filepath.Join(out, peer+".stamp")
	if old, err := os.ReadFile(stamp); err != nil || string(old) != hash || !exists(bin) {
		t0 := time.Now()
		if err := build(); err != nil {
			return nil, fmt.Errorf("perf: peers: build %s: %w", peer, err)
		}
		pb.Built = time.Since(t0)
		if err := os.WriteFile(stamp, []byte(hash), 0o644); err != nil {
			return nil, fmt.Errorf("perf: peers: %w", err)
		}
	}
	switch peer {
	case "beam":
		pb.Version = beamVersion()
		dir := filepath.Dir(bin)
		pb.Command = func(workers int, shapes []string) []string {
			s := fmt.Sprintf("+S%d:%d", workers, workers)
			return append([]string{"erl", "-noshell", s, "-pa", dir, "-run", "jade_peers", "main", fmt.Sprintf("workers=%d", workers)}, shapes...)
		}
	case "tokio":
		lock, err := os.ReadFile(filepath.Join(root, "bench", "peers", "tokio", "Cargo.lock"))
		if err == nil {
			pb.Version, err = TokioVersion(lock)
		}
		if err != nil {
			return nil, fmt.Errorf("perf: peers: tokio version: %w", err)
		}
		pb.Version = "tokio " + pb.Version
		pb.Command = func(workers int, shapes []string) []string {
			return append([]string{bin, fmt.Sprintf("workers=%d", workers)}, shapes...)
		}
	}
	return pb, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// runQuiet runs cmd and returns its output's last lines with its error.
func runQuiet(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(cmd.Path), err, lastLines(out, 5))
	}
	return nil
}

// beamVersion is "OTP <release>, erts <version>" from the installed erl.
func beamVersion() string {
	out, err := exec.Command("erl", "-noshell", "-eval",
		`io:format("OTP ~s, erts ~s", [erlang:system_info(otp_release), erlang:system_info(version)]), halt().`).Output()
	if err != nil {
		return "OTP (version unknown)"
	}
	return strings.TrimSpace(string(out))
}

// RunPeer runs the peer once at workers with the given SHAPE=COUNT
// arguments, bounded by timeout, and parses its lines.
func RunPeer(pb *PeerBuild, workers int, shapes []string, timeout time.Duration) ([]PeerLine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := pb.Command(workers, shapes)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("perf: peers: %s: no result within %v", pb.Peer, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("perf: peers: %s: %w: %s", pb.Peer, err, lastLines(stderr.Bytes(), 3))
	}
	lines, _, err := ParsePeerOutput(&stdout, pb.Peer)
	return lines, err
}
