//go:build !unix

package app

// privateFiles has nothing to do where there is no umask.
func privateFiles() {}
