// Package replica keeps the control process's state outside its machine and
// fences the control role to one process at a time.
//
// The lease (Lease) is a key in a JetStream key-value bucket that one control
// process holds and renews; another waits for it, and takes it when the
// holder releases it or stops renewing it. Only the holder fires
// subscriptions and writes its store.
//
// The holder's SQLite database is replicated continuously into a JetStream
// object store by Litestream, in a process of its own (Replicator, started
// by the control process; RunReplicator is what that process runs): Litestream's
// library opens the database with another SQLite library than Herald's,
// and two SQLite libraries in one process do not see each other's locks.
// The warehouse of every project and the key files go to the same object
// store as snapshots named by their content (Snapshots). A control process
// that starts on an empty data folder restores all of it before it opens
// anything.
package replica
