// Package natstest runs real nats-server processes for tests: one JetStream
// server or a cluster of them on loopback ports, built once from the version
// go.mod requires and kept in the user's cache folder. It imports nothing of
// the service, so that a package's tests that need a broker link without it.
package natstest
