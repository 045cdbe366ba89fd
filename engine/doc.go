// Package engine fires subscriptions. Its scheduler keeps the next fire time
// of every trigger in a min-heap and hands due instants to a pool of runners;
// a runner claims the (subscription, instant) pair in SQLite, decides as the
// API does whether the subscription's owner may have it run, evaluates the
// condition through the analytics port it declares (Analytics), as the owner
// and in process, renders the message, exports the attachments into its
// content-addressed file store and hands the deliveries to the worker in one
// transaction.
package engine
