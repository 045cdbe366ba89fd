// Package apptest starts a whole Herald service in-process for tests: a real
// store in t.TempDir(), the API on a random loopback port, an injected clock,
// and a logged-in client of the domain admin.
package apptest
