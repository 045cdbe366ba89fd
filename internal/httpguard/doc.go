// Package httpguard holds the rules every HTTP request meets before the API or
// the console does any work for it: the methods the service knows (anything
// else is one label value, "other"), and the clipping of request-provided
// strings before they are logged.
package httpguard
