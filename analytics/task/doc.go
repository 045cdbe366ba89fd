// Package task runs the asynchronous work of projects (validation, exports, imports) on
// a bounded pool and keeps every task's state in the store, where clients poll it. A
// task that a restart cut off reads as failed, never as running forever.
package task
