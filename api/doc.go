// Package api serves Herald's /svc/ HTTP JSON API: the two-token cookie login,
// accounts, projects and their members. Every error has the platform's error
// body, every response a request id, and every route's authorization comes from
// the one policy table in authz.go.
package api
