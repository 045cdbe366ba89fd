package cpuset

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
)

// Split is the CPUs the server process and the load generator each run on;
// both are empty when the processes are not pinned.
type Split struct {
	Server, Load []int
}

// Pinned is whether the split pins the processes.
func (s Split) Pinned() bool { return len(s.Server) > 0 }

// String says where each process runs, as the benchmark's output does.
func (s Split) String() string {
	if !s.Pinned() {
		return fmt.Sprintf("server and load not pinned: they share the CPUs, GOMAXPROCS %d each", runtime.GOMAXPROCS(0))
	}
	return fmt.Sprintf("server on %s (GOMAXPROCS %d), load on %s (GOMAXPROCS %d)",
		Format(s.Server), len(s.Server), Format(s.Load), len(s.Load))
}

// Choose is the split the flags ask for, as lists of CPUs such as
// "0" or "0-3,6": with neither, the CPUs this process may run on are halved,
// the server taking the first half; with one, the other takes the rest.
// Where processes cannot be pinned (not Linux, or a single CPU) and no flag
// asks for it, the split is empty and note says why.
func Choose(serverCPUs, loadCPUs string) (s Split, note string, err error) {
	avail, err := Allowed()
	asked := serverCPUs != "" || loadCPUs != ""
	switch {
	case err != nil && asked:
		return Split{}, "", err
	case err != nil:
		return Split{}, err.Error(), nil
	case len(avail) < 2 && !asked:
		return Split{}, fmt.Sprintf("this process may run on %s only, so the server and the load share it", Format(avail)), nil
	}
	if s.Server, err = Parse(serverCPUs); err != nil {
		return Split{}, "", fmt.Errorf("server CPUs: %w", err)
	}
	if s.Load, err = Parse(loadCPUs); err != nil {
		return Split{}, "", fmt.Errorf("load CPUs: %w", err)
	}
	switch {
	case !asked:
		half := (len(avail) + 1) / 2
		s.Server, s.Load = avail[:half], avail[half:]
	case len(s.Server) == 0:
		s.Server = without(avail, s.Load)
	case len(s.Load) == 0:
		s.Load = without(avail, s.Server)
	}
	return s, "", s.check(avail)
}

// check reports an error unless both sides have CPUs, none shared, all
// among avail.
func (s Split) check(avail []int) error {
	if len(s.Server) == 0 || len(s.Load) == 0 {
		return fmt.Errorf("no CPU left for one side of %s and %s", Format(s.Server), Format(s.Load))
	}
	for _, c := range append(slices.Clone(s.Server), s.Load...) {
		if !slices.Contains(avail, c) {
			return fmt.Errorf("CPU %d is not among those this process may run on, %s", c, Format(avail))
		}
	}
	for _, c := range s.Server {
		if slices.Contains(s.Load, c) {
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

// Pin runs this whole process on cpus, with as many Ps.
func Pin(cpus []int) error {
	runtime.GOMAXPROCS(len(cpus))
	if err := pinProcess(cpus); err != nil {
		return err
	}
	got, err := Allowed()
	if err != nil {
		return err
	}
	if !slices.Equal(got, cpus) {
		return errors.New("pinned to " + Format(got) + ", not " + Format(cpus))
	}
	return nil
}
