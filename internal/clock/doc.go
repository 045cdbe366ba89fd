// Package clock is the time Herald runs on: every package that reads the
// time or waits is given a Clock, and none calls time.NewTimer,
// time.NewTicker, time.After, time.Tick, time.AfterFunc or time.Sleep itself
// (a test at the module's root holds this).
//
// A process runs on Real. Tests move the time with clocktest.Clock, or give
// a part NowFrom(f): the time f says, with real waits, for the parts whose
// waits pace work (sweeps, retries, polls) while the test sets the time their
// data is stamped with.
//
// Durations measured for logs and metrics (time.Since of a start) are not
// read from a Clock: they measure the machine, and a stopped clock would
// make them zero.
package clock
