// Package store keeps Herald's state in SQLite: accounts, sessions, projects and
// their members. Migrations are embedded and applied in one transaction at open;
// writes go through a single connection so SQLite never sees two writers, while
// reads use a separate pool of read-only connections over the WAL. A third
// connection, owned by the Store until Close, copies the WAL into the database
// file every second, so that the writer's commits do not.
package store
