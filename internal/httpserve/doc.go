// Package httpserve holds the http section of the configuration and the HTTP
// server built from it: the listener with its bounds on connections (all of
// them, and those of one client), TLS and the framing check of
// internal/httpguard, and the http.Server with its timeouts, which refuses
// ambiguously framed requests before the handler sees them and, at shutdown,
// closes at once the connections that never sent a request.
package httpserve
