// Package distant puts a network's distance between a listener on the
// loopback interface and its clients, so that a benchmark can measure what
// round trips cost a sender whose relay is on another machine.
package distant
