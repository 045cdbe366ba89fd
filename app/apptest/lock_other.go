//go:build !unix

package apptest

// lockFile locks nothing here: test binaries that build at the same time
// may each link the command.
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
