// Package paralleltest lets a test binary run more tests at once than Go's
// default of one per CPU, for packages whose tests spend their time waiting
// on other processes, servers' timers and cron instants rather than
// computing; through a Gate, lets the longest of them start first; and keeps
// a test that times a recovery apart from other packages' tests that load the
// machine hard (AloneOnMachine, HeavyOnMachine).
package paralleltest
