// Package export turns executed report results into files off the request
// path: a bounded pool renders CSV, XLSX, PDF and PNG into the data folder,
// the state of every export is kept in SQLite so a restart neither loses a
// finished file nor forgets one in progress, and expired files are removed.
package export
