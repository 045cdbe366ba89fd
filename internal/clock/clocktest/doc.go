// Package clocktest is a clock.Clock for tests: it stands still until the
// test moves it, and then fires the timers and tickers that came due, each
// with its own instant.
package clocktest
