//go:build !linux

package scratch

// roomIn is false where there is no /dev/shm to count on.
func roomIn(string, uint64) bool { return false }

// running is true: InMemory makes no folders here, so none is left over.
func running(int) bool { return true }
