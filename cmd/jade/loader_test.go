//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jadevm/jade/vmloop"
)

// craftedSize is the size of the files TestLoadCraftedBinaries makes.
const craftedSize = 20 << 20

// TestLoadCraftedBinaries runs jade on .jbc files of 20 MiB made of the
// smallest elements of the format, which used to decode and verify to
// 57–67 times their size (1.1–1.35 GB): the hostile ones are refused before
// they are allocated, in a few times the file, and the worst one that
// verifies (a million one-instruction functions) stays under the bound
// docs/JASM.md gives. The files are generated here, not committed.
func TestLoadCraftedBinaries(t *testing.T) {
	bin := jadeBinary(t)
	dir := t.TempDir()
	shapes := []struct {
		name   string
		data   []byte
		exit   int
		stderr string
		factor int64 // peak RSS at most factor times the file, plus 64 MiB
	}{
		{"empty functions", craftEmptyFunctions(), exitLoad, "decode bound (16 times the", 3},
		{"branch targets in a wide frame", craftJumps(t, vmloop.MaxRegs), exitLoad, "function too large to verify", 3},
		{"one-instruction functions", craftSmallFunctions(t), exitSuccess, "", 21},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			path := filepath.Join(dir, "crafted.jbc")
			require.NoError(t, os.WriteFile(path, sh.data, 0o644))
			code, stderr, rss := runMeasured(t, bin, "run", path)
			require.Equal(t, sh.exit, code, "stderr %s", stderr)
			require.Contains(t, stderr, sh.stderr)
			if sh.stderr != "" {
				require.Contains(t, stderr, "jade: "+path+": ", "names the file")
				require.NotRegexp(t, `: (jade|vmloop): `, stderr, "one package prefix")
			}
			t.Logf("%d-byte file: exit %d, peak RSS %d MiB (%.1f times the file)", len(sh.data), code, rss>>20, float64(rss)/float64(len(sh.data)))
			require.LessOrEqual(t, rss, sh.factor*int64(len(sh.data))+64<<20, "peak RSS")
		})
	}
}

// craftEmptyFunctions is a version 4 file of 7-byte functions with no
// name, code or anything else: 240 bytes each once decoded.
func craftEmptyFunctions() []byte {
	b := []byte("JADE")
	b = binary.LittleEndian.AppendUint16(b, vmloop.BinaryVersion)
	b = binary.LittleEndian.AppendUint16(b, vmloop.ABI.Major)
	b = binary.LittleEndian.AppendUint16(b, vmloop.ABI.Minor)
	b = append(b, 0, 0)          // file, abi line
	b = append(b, 0, 0, 0, 0, 0) // pools, imports
	n := craftedSize / 7
	b = binary.AppendUvarint(b, uint64(n))
	return append(b, make([]byte, 7*n)...)
}

// craftJumps is one function of jumps to the next instruction, every one
// a branch target, in a frame of nregs registers.
func craftJumps(t *testing.T, nregs int) []byte {
	n := craftedSize / 8
	code := make([]vmloop.Instr, 0, n+1)
	for pc := range n {
		code = append(code, vmloop.Encode(vmloop.JMP, 0, 0, 0, int32(pc+1)))
	}
	code = append(code, vmloop.Encode(vmloop.RETV, 0, 0, 0, 0))
	return craftMarshal(t, []vmloop.Function{{Name: "main", Result: vmloop.TVoid, NRegs: nregs, Code: code}})
}

// craftSmallFunctions is a program of one-instruction functions with
// short names: the largest decoded form per byte that verifies.
func craftSmallFunctions(t *testing.T) []byte {
	fns := make([]vmloop.Function, craftedSize/19)
	retv := []vmloop.Instr{vmloop.Encode(vmloop.RETV, 0, 0, 0, 0)}
	for i := range fns {
		fns[i] = vmloop.Function{Name: "f" + strconv.FormatInt(int64(i), 36), Result: vmloop.TVoid, Code: retv}
	}
	fns[0].Name = "main"
	return craftMarshal(t, fns)
}

func craftMarshal(t *testing.T, fns []vmloop.Function) []byte {
	b, err := (&vmloop.Program{ABI: vmloop.ABI, Funcs: fns}).MarshalBinary()
	require.NoError(t, err)
	return b
}

// rssEnv names the command (one argument a line) the test binary runs when it is
// started as the launcher of runMeasured, and rssOut the file it writes the
// command's exit code and peak RSS to.
const (
	rssEnv = "JADE_TEST_RSS_ARGS"
	rssOut = "JADE_TEST_RSS_OUT"
)

func init() { launchHook = rssLaunch }

// rssLaunch is the launcher of runMeasured: it runs the command of rssEnv
// with this process's stdio and writes "code rss" to rssOut.
func rssLaunch() (int, bool) {
	args := os.Getenv(rssEnv)
	if args == "" {
		return 0, false
	}
	argv := strings.Split(args, "\n")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	out := fmt.Sprintf("%d %d", cmd.ProcessState.ExitCode(), int64(ru.Maxrss)<<10) // KiB on Linux
	if err := os.WriteFile(os.Getenv(rssOut), []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

// runMeasured runs a command and returns its exit code, its stderr and its
// peak RSS. Linux starts a process with the peak RSS of the one that
// started it (exec keeps the high-water mark of the memory it replaces,
// which a vfork child shares with its parent), and this test process holds
// the crafted files: the command is started by a fresh, small copy of the
// test binary instead (rssLaunch), whose own peak is a few MiB.
func runMeasured(t *testing.T, argv ...string) (code int, stderr string, rss int64) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "rss")
	var errb bytes.Buffer
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), rssEnv+"="+strings.Join(argv, "\n"), rssOut+"="+out)
	cmd.Stdout, cmd.Stderr = io.Discard, &errb
	require.NoError(t, cmd.Run(), "launcher: %s", errb.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	_, err = fmt.Sscan(string(b), &code, &rss)
	require.NoError(t, err)
	return code, errb.String(), rss
}
