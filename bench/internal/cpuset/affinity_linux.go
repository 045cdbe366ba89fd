package cpuset

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Allowed is the CPUs the calling thread may run on, in order.
func Allowed() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// pinProcess lets every thread of this process run on cpus only. A thread
// inherits its creator's CPUs, so once no new thread shows up between two
// passes, every thread the process will have is pinned.
func pinProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	done := map[int]bool{}
	for {
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := false
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh, done[tid] = true, true
			err := unix.SchedSetaffinity(tid, &set)
			if err != nil && !errors.Is(err, unix.ESRCH) { // ESRCH: it has ended
				return fmt.Errorf("sched_setaffinity of thread %d: %w", tid, err)
			}
		}
		if !fresh {
			return nil
		}
	}
}

// threads is the IDs of this process's threads.
func threads() ([]int, error) {
	es, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(es))
	for _, e := range es {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
