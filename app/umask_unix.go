//go:build unix

package app

import "syscall"

// privateFiles makes every file and folder the process creates from now on private to
// its user (0600 and 0700), whichever library creates it: SQLite, DuckDB, NATS.
func privateFiles() { syscall.Umask(0o077) }
