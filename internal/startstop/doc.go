// Package startstop runs the long-lived parts of a process as units: each
// unit is a named Run func that works until its context ends and returns
// only once everything it started has stopped. A Group starts units, tells
// when one fails, and stops them last started first, waiting for each, so
// that a part stops before the parts it uses.
package startstop
