// Package backup writes and restores backups of a control process's data
// folder: its SQLite database (copied with SQLite's online backup), the
// checkpointed warehouse of every project, the key files and the files runs
// attach, as a tar stream whose last entry is a manifest with each file's
// size and SHA-256, or a folder of the same files beside the manifest.
package backup
