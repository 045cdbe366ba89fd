package main

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// split is the CPUs the server process and the load generator each run on;
// both are empty when the processes are not pinned.
type split struct {
	server, load []int
}

// pinned is whether the split pins the processes.
func (s split) pinned() bool { return len(s.server) > 0 }

// String says where each process runs, as the benchmark's output does.
func (s split) String() string {
	if !s.pinned() {
		return fmt.Sprintf("server and load not pinned: they share the CPUs, GOMAXPROCS %d each", runtime.GOMAXPROCS(0))
	}
	return fmt.Sprintf("server on %s (GOMAXPROCS %d), load on %s (GOMAXPROCS %d)",
		formatCPUs(s.server), len(s.server), formatCPUs(s.load), len(s.load))
}

// chooseSplit is the split the flags ask for, as lists of CPUs such as
// "0" or "0-3,6": with neither, the CPUs this process may run on are halved,
// the server taking the first half; with one, the other takes the rest.
// Where processes cannot be pinned (not Linux, or a single CPU) and no flag
// asks for it, the split is empty and note says why.
func chooseSplit(serverCPUs, loadCPUs string) (s split, note string, err error) {
	avail, err := processCPUs()
	asked := serverCPUs != "" || loadCPUs != ""
	switch {
	case err != nil && asked:
		return split{}, "", err
	case err != nil:
		return split{}, err.Error(), nil
	case len(avail) < 2 && !asked:
		return split{}, fmt.Sprintf("this process may run on %s only, so the server and the load share it", formatCPUs(avail)), nil
	}
	if s.server, err = parseCPUs(serverCPUs); err != nil {
		return split{}, "", fmt.Errorf("server CPUs: %w", err)
	}
	if s.load, err = parseCPUs(loadCPUs); err != nil {
		return split{}, "", fmt.Errorf("load CPUs: %w", err)
	}
	switch {
	case !asked:
		half := (len(avail) + 1) / 2
		s.server, s.load = avail[:half], avail[half:]
	case len(s.server) == 0:
		s.server = without(avail, s.load)
	case len(s.load) == 0:
		s.load = without(avail, s.server)
	}
	return s, "", s.check(avail)
}

// check reports an error unless both sides have CPUs, none shared, all
// among avail.
func (s split) check(avail []int) error {
	if len(s.server) == 0 || len(s.load) == 0 {
		return fmt.Errorf("no CPU left for one side of %s and %s", formatCPUs(s.server), formatCPUs(s.load))
	}
	for _, c := range append(slices.Clone(s.server), s.load...) {
		if !slices.Contains(avail, c) {
			return fmt.Errorf("CPU %d is not among those this process may run on, %s", c, formatCPUs(avail))
		}
	}
	for _, c := range s.server {
		if slices.Contains(s.load, c) {
			return fmt.Errorf("CPU %d is given to both the server and the load", c)
		}
	}
	return nil
}

// without is the CPUs of all that are not in some.
func without(all, some []int) []int {
	var out []int
	for _, c := range all {
		if !slices.Contains(some, c) {
			out = append(out, c)
		}
	}
	return out
}

// parseCPUs reads a list of CPUs such as "0", "0,2" or "0-3,6", sorted and
// without repeats; "" is none.
func parseCPUs(list string) ([]int, error) {
	var cpus []int
	if list == "" {
		return nil, nil
	}
	for part := range strings.SplitSeq(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return nil, fmt.Errorf("%q is not a CPU number", lo)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("%q is not a range of CPUs", part)
			}
		}
		for c := first; c <= last; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// formatCPUs writes sorted CPUs the way parseCPUs reads them, after "CPU"
// or "CPUs": "CPU 0", "CPUs 0-3,6".
func formatCPUs(cpus []int) string {
	if len(cpus) == 0 {
		return "no CPU"
	}
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	if len(cpus) == 1 {
		return "CPU " + parts[0]
	}
	return "CPUs " + strings.Join(parts, ",")
}

// pin runs this whole process on cpus, with as many Ps.
func pin(cpus []int) error {
	runtime.GOMAXPROCS(len(cpus))
	if err := pinProcess(cpus); err != nil {
		return err
	}
	got, err := processCPUs()
	if err != nil {
		return err
	}
	if !slices.Equal(got, cpus) {
		return errors.New("pinned to " + formatCPUs(got) + ", not " + formatCPUs(cpus))
	}
	return nil
}
