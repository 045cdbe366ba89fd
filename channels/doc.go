// Package channels defines what a delivery channel is to the worker: a decrypted channel
// configuration, the message to deliver and the Sender contract every channel kind implements.
// Errors carry intent: a plain error may pass on a later attempt, one wrapped by Permanent never will.
package channels
