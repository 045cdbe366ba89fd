package main

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
		cpus, err := parseCPUs(tc.in)
		if err != nil || !slices.Equal(cpus, tc.cpus) {
			t.Errorf("parseCPUs(%q) = %v, %v; want %v", tc.in, cpus, err, tc.cpus)
		}
		if got := formatCPUs(cpus); got != tc.out {
			t.Errorf("formatCPUs(%v) = %q; want %q", cpus, got, tc.out)
		}
	}
	for _, bad := range []string{"x", "-1", "3-1", "0,"} {
		if _, err := parseCPUs(bad); err == nil {
			t.Errorf("parseCPUs(%q) took it", bad)
		}
	}
}

func TestSplitCheck(t *testing.T) {
	avail := []int{0, 1, 2, 3}
	for _, tc := range []struct {
		s  split
		ok bool
	}{
		{split{server: []int{0}, load: []int{1}}, true},
		{split{server: []int{0, 1}, load: []int{1}}, false},
		{split{server: []int{0}, load: []int{4}}, false},
		{split{server: []int{0}}, false},
	} {
		if err := tc.s.check(avail); (err == nil) != tc.ok {
			t.Errorf("%+v: check = %v", tc.s, err)
		}
	}
}
