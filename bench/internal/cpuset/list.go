package cpuset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Parse reads a list of CPUs such as "0", "0,2" or "0-3,6", sorted and
// without repeats; "" is none.
func Parse(list string) ([]int, error) {
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

// Format writes sorted CPUs the way Parse reads them, after "CPU"
// or "CPUs": "CPU 0", "CPUs 0-3,6".
func Format(cpus []int) string {
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
