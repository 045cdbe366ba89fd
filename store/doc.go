// Package store keeps Herald's state in SQLite: accounts, sessions, projects and
// their members. Migrations are embedded and applied in one transaction at open;
// writes go through a single connection so SQLite never sees two writers, while
// reads use a separate pool of read-only connections over the WAL.
package store
