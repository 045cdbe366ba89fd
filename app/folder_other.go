//go:build !unix

package app

// privateFiles has nothing to do where there is no umask.
func privateFiles() {}

// lockFolder takes no lock where there is no flock.
func lockFolder(string) (func() error, error) { return func() error { return nil }, nil }
