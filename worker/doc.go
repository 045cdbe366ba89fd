// Package worker delivers the messages of subscription runs over NATS
// JetStream: a relay publishes the store's outbox to one subject per channel
// kind, and a durable consumer per kind sends each delivery through its
// channels.Sender, retrying with backoff, while the store's ledger makes sure
// nothing recorded as sent goes out again.
package worker
