package perf

import (
	"fmt"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"
)

// RunInfo says when and how a report was made: the summary above the
// table and at the top of the HTML report.
type RunInfo struct {
	Date time.Time `json:"date"` // when the run started, UTC
	// Commit is the source's commit: the executable's VCS stamp, else
	// `git rev-parse` in the repository around the working directory
	// ("-dirty" when files differ from it); empty where neither is known.
	Commit string `json:"commit,omitempty"`
	Quick  bool   `json:"quick"` // --quick: about a third of the sizes
	Reps   int    `json:"reps"`  // repetitions per measurement
}

// runInfo describes the run o is about to make.
func runInfo(o *Options) RunInfo {
	return RunInfo{Date: time.Now().UTC().Truncate(time.Second), Commit: sourceCommit(o.PeersRoot), Quick: o.Quick, Reps: o.Reps}
}

// sourceCommit returns the commit the executable was built from: its VCS
// stamp (go build), else the HEAD of the repository at root or around
// the working directory (go run leaves no stamp).
func sourceCommit(root string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "-dirty"
			}
		}
		if rev != "" {
			return short(rev) + dirty
		}
	}
	if root == "" {
		var err error
		if root, err = FindPeersRoot("."); err != nil {
			return "" // not inside the repository: the commit is unknown
		}
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := short(strings.TrimSpace(string(out)))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "-dirty"
	}
	return c
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Tally counts a report's rows by outcome.
type Tally struct {
	Pass, Fail, Reported, Absent int
}

// tally counts r's rows: gated rows that pass or miss, rows reported
// without a gate, and absent rows.
func tally(r *Report) Tally {
	var t Tally
	for _, s := range r.Scenarios {
		switch {
		case s.Absent != "":
			t.Absent++
		case s.Pass == nil:
			t.Reported++
		case *s.Pass:
			t.Pass++
		default:
			t.Fail++
		}
	}
	return t
}

// summaryLine is the report's summary in one line: outcomes, size of the
// run, date, commit and the peers' versions.
func summaryLine(r *Report) string {
	t := tally(r)
	size := "full"
	if r.Run.Quick {
		size = "quick"
	}
	date, commit := "date unknown", "commit unknown"
	if !r.Run.Date.IsZero() {
		date = r.Run.Date.Format("2006-01-02 15:04 UTC")
	}
	if r.Run.Commit != "" {
		commit = "commit " + r.Run.Commit
	}
	return fmt.Sprintf("%d pass, %d FAIL, %d reported without a gate, %d absent; %s run, %s; %s; %s; peers: %s",
		t.Pass, t.Fail, t.Reported, t.Absent, size, repsText(r.Run.Reps), date, commit, peerVersions(r))
}

// repsText is "1 rep" or "N reps".
func repsText(n int) string {
	if n == 1 {
		return "1 rep"
	}
	return fmt.Sprintf("%d reps", n)
}

// peerVersions lists the peers and their versions, or says they did not
// run.
func peerVersions(r *Report) string {
	if len(r.Peers) == 0 {
		return "not run (--peers runs Tokio and BEAM)"
	}
	var ps []string
	for _, p := range r.Peers {
		if p.Skipped != "" {
			ps = append(ps, p.Peer+" skipped")
		} else {
			ps = append(ps, p.Version)
		}
	}
	return strings.Join(ps, ", ")
}
