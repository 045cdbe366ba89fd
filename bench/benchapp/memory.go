package benchapp

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// ResetPeakRSS starts the process's peak resident memory over from its
// current resident memory (Linux; elsewhere it does nothing).
func ResetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// PeakRSS is the process's peak resident memory in MiB since the last
// reset (Linux; NaN elsewhere).
func PeakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return math.NaN()
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return math.NaN()
}

// Sum adds up every series of metric in m, as apptest.Metrics reads them.
func Sum(m map[string]float64, metric string) float64 {
	var n float64
	for series, v := range m {
		if series == metric || strings.HasPrefix(series, metric+"{") {
			n += v
		}
	}
	return n
}
