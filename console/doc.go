// Package console is Herald's web console at /console/: the user's projects,
// subscriptions with their schedules and run history, and channels, as
// server-rendered pages (html/template, assets embedded in the binary) that
// work without JavaScript; a small script only adds conveniences (a live
// description of a cron expression, local times, confirmations).
//
// The console is a client of the API, in process: every page reads and every
// form writes through the same /svc/ endpoints, with the browser's own
// two-token session (it fetches new temporary tokens itself), so the API's
// permissions, validation and error field paths are the console's. Forms
// carry a CSRF token bound to the browser's API session (the sign-in form: to
// a fresh cookie its page sets) and are taken only from the console's own
// pages (Sec-Fetch-Site); pages are sent with a Content-Security-Policy that
// allows no inline script and no framing.
package console
