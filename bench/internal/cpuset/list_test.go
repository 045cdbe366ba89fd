package cpuset

import (
	"slices"
	"testing"
)

func TestParseAndFormatCPUs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cpus []int
		out  string
	}{
		{"0", []int{0}, "CPU 0"},
		{"1,0", []int{0, 1}, "CPUs 0-1"},
		{"0-3, 6,2", []int{0, 1, 2, 3, 6}, "CPUs 0-3,6"},
		{"", nil, "no CPU"},
	} {
		cpus, err := Parse(tc.in)
		if err != nil || !slices.Equal(cpus, tc.cpus) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, cpus, err, tc.cpus)
		}
		if got := Format(cpus); got != tc.out {
			t.Errorf("Format(%v) = %q; want %q", cpus, got, tc.out)
		}
	}
	for _, bad := range []string{"x", "-1", "3-1", "0,"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}
