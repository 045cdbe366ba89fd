package benchapp

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// commitFlag names the commit measured when the binary cannot tell
// (built outside the repository, or with -buildvcs=false).
var commitFlag = flag.String("commit", "", "the commit measured, when the binary cannot tell: built outside the repository or without VCS stamping")

// Commit is the commit the benchmark was built from: the -commit flag, else
// the binary's VCS stamp, else `git rev-parse --short HEAD` in the working
// directory; "+dirty" marks uncommitted changes. "unknown" when none says.
func Commit() string {
	if *commitFlag != "" {
		return *commitFlag
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			return rev[:min(len(rev), 7)] + dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += "+dirty"
	}
	return rev
}

// CPUModel is the machine's CPU model as /proc/cpuinfo names it, or the
// architecture where it does not.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// LoadAverage is the 1, 5 and 15 minute load averages, as /proc/loadavg
// has them, or "n/a".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// Header writes where and what the benchmark measures: the date, the
// commit, the CPU model and count, Go, and the load average now. Every
// benchmark prints it first.
func Header(w io.Writer, name string) {
	fmt.Fprintf(w, "%s: %s, commit %s, %s × %d CPUs, %s %s/%s, load average %s\n", name,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), Commit(), CPUModel(), runtime.NumCPU(),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, LoadAverage())
}

// Verdict is one target's outcome: a figure and its baseline measured in
// the same run, their ratio and whether the ratio meets the target. Where a
// target is an absolute figure (a latency bound), Limit bounds the figure
// itself and the ratio to the baseline is printed beside it.
type Verdict struct {
	Target   string  // what is aimed at, as the README states it
	Baseline string  // what was measured beside it, with its figure
	Figure   string  // Herald's figure
	Ratio    float64 // Herald's figure over the baseline's, in the target's sense
	// Limit is what Ratio (or Value, when Absolute) must stay at or below
	// (AtLeast false) or reach (AtLeast true).
	Limit    float64
	AtLeast  bool
	Absolute bool    // the limit applies to Value, not to Ratio
	Value    float64 // the figure the limit applies to, when Absolute
}

// Met reports whether the target is met.
func (v Verdict) Met() bool {
	x := v.Ratio
	if v.Absolute {
		x = v.Value
	}
	if v.AtLeast {
		return x >= v.Limit
	}
	return x <= v.Limit
}

// Print writes the verdict as one block of lines.
func (v Verdict) Print(w io.Writer) {
	met := "NOT MET"
	if v.Met() {
		met = "met"
	}
	fmt.Fprintf(w, "target:   %s\nbaseline: %s\nherald:   %s\nratio:    %.2f\nverdict:  %s\n", v.Target, v.Baseline, v.Figure, v.Ratio, met)
}

// Footer writes the load average at the end of the run.
func Footer(w io.Writer) {
	fmt.Fprintf(w, "load average at the end: %s\n", LoadAverage())
}
