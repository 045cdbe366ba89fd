// Package engine fires subscriptions. Its scheduler keeps the next fire time
// of every trigger in a min-heap and hands due instants to a pool of runners;
// a runner claims the (subscription, instant) pair in SQLite, evaluates the
// condition through the analytics API, renders the message, exports the
// attachments and hands the deliveries to the worker in one transaction.
package engine
