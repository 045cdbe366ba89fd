// Package mailcheck checks what a benchmark's SMTP sink accepted, after the
// measured burst, so that a fast run is also a right one: Values, that each
// subscription of an alert burst mailed its own metric's value once; Mails,
// that the subscribers of a report were each sent the same files, whole.
package mailcheck
