// Package maintenance validates projects, exports a whole project (model, objects, and
// optionally its members and data) or some objects with what they use into an archive
// named by a token, and imports such archives into other projects. Each of these runs as
// an asynchronous task; archives expire.
package maintenance
