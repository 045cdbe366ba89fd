package notify

import (
	"fmt"
	"time"
)

// Code says what kind of refusal an Error is.
type Code int

// The refusals of the notification side.
const (
	Invalid   Code = iota + 1 // the input does not validate; Field names where
	NotFound                  // the record does not exist (or is not the caller's to see)
	Forbidden                 // the caller or the owner may not do this
	Conflict                  // the state of other records stands in the way
	TooSoon                   // done again too soon; RetryAfter says when it may be
	Gone                      // it existed, and no longer does (an expired link)
)

// Error is a refusal of the notification side. Message is a printf template
// filled from Params, as the API renders errors; Field, for Invalid, is the
// wrong field's path on the wire, such as subscription.triggers[0].timerEvent.cronExpression.
type Error struct {
	Code       Code
	Field      string
	Message    string
	Params     []string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Text()
	}
	return e.Text()
}

// Text is the message with its parameters filled in.
func (e *Error) Text() string {
	args := make([]any, len(e.Params))
	for i, p := range e.Params {
		args[i] = p
	}
	return fmt.Sprintf(e.Message, args...)
}

func invalid(field, msg string) *Error {
	return &Error{Code: Invalid, Field: field, Message: "%s", Params: []string{msg}}
}

func notFound(message string, params ...string) *Error {
	return &Error{Code: NotFound, Message: message, Params: params}
}

func forbidden(message string, params ...string) *Error {
	return &Error{Code: Forbidden, Message: message, Params: params}
}

func conflict(message string, params ...string) *Error {
	return &Error{Code: Conflict, Message: message, Params: params}
}

func gone(message string, params ...string) *Error {
	return &Error{Code: Gone, Message: message, Params: params}
}
