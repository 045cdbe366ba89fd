// Package paralleltest lets a test binary run more tests at once than Go's
// default of one per CPU, for packages whose tests spend their time waiting
// on other processes, servers' timers and cron instants rather than
// computing; and, through a Gate, lets the longest of them start first.
package paralleltest
