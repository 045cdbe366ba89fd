// Package benchapp starts a whole Herald in the benchmark's own process, the
// way the benchmarks measure it: a data folder of its own, the API on a
// random loopback port, nothing logged, and a client logged in as the domain
// admin. It also holds the small sales model several benchmarks load.
package benchapp
