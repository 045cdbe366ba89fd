// Package logging holds the log section of the configuration and what is built
// from it: the process's slog.Logger (level and format) and the policy of the
// access log (which requests get a line, at which level).
package logging
