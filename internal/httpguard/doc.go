// Package httpguard holds the rules every HTTP request meets before the API or
// the console does any work for it: the methods the service knows (anything
// else is one label value, "other"), the clipping of request-provided strings
// before they are logged, the refusal of state-changing requests that a
// browser says another site sent, and, at the connection, the refusal of
// requests that state their length two ways at once (Transfer-Encoding and
// Content-Length) and the bound on the connections of one client address.
package httpguard
