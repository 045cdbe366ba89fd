// Package client is a Go client of Herald's /svc/ API. It speaks the
// two-token login: it logs in for the super-secure token, fetches temporary
// tokens as they expire (one shared refresh for concurrent requests, each
// failed request replayed once) and logs in again when the login itself ends.
package client
