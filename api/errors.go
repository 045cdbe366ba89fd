package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/notify"
)

// Error classes of the error body.
const (
	classUser         = "User"
	classUnauthorized = "Unauthorized"
	classForbidden    = "Forbidden"
	classNotFound     = "NotFound"
	classConflict     = "Conflict"
	classTooMany      = "TooManyRequests"
	classUnavailable  = "Unavailable"
	classInternal     = "Internal"
)

// Error is an API error: an HTTP status and the platform's error body. Message
// is a printf template filled from Params, as clients render it.
type Error struct {
	Status    int
	Class     string
	Component string
	Message   string
	Params    []string
	// header is set on the response when not empty (e.g. Retry-After).
	header http.Header
}

func (e *Error) Error() string {
	args := make([]any, len(e.Params))
	for i, p := range e.Params {
		args[i] = p
	}
	return fmt.Sprintf(e.Message, args...)
}

type errorBody struct {
	Error errorContent `json:"error"`
}

type errorContent struct {
	ErrorClass string   `json:"errorClass"`
	Component  string   `json:"component"`
	Message    string   `json:"message"`
	Parameters []string `json:"parameters"`
	RequestID  string   `json:"requestId"`
}

func newError(status int, class, component, message string, params ...string) *Error {
	if params == nil {
		params = []string{}
	}
	return &Error{Status: status, Class: class, Component: component, Message: message, Params: params}
}

// badField is a 400 naming the field at path; msg is plain text, not a template.
func badField(path, msg string) *Error {
	return newError(http.StatusBadRequest, classUser, "api", "Field %s "+escapePercent(msg), path)
}

func badRequest(component, message string, params ...string) *Error {
	return newError(http.StatusBadRequest, classUser, component, message, params...)
}

func notFound(component, message string, params ...string) *Error {
	return newError(http.StatusNotFound, classNotFound, component, message, params...)
}

func forbidden(component, message string, params ...string) *Error {
	return newError(http.StatusForbidden, classForbidden, component, message, params...)
}

func conflict(component, message string, params ...string) *Error {
	return newError(http.StatusConflict, classConflict, component, message, params...)
}

func escapePercent(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// asError turns any error into the API error to send; errors that are not
// *Error become a 500 whose detail stays in the log.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return newError(http.StatusInternalServerError, classInternal, "api", "Internal error; the request id identifies it in the log")
}

// fromDomain turns a refusal of the notification side into the API error
// that says it; other errors pass through.
func fromDomain(component string, err error) error {
	var de *notify.Error
	if !errors.As(err, &de) {
		return err
	}
	switch de.Code {
	case notify.Invalid:
		return badField(de.Field, de.Text())
	case notify.NotFound:
		return notFound(component, de.Message, de.Params...)
	case notify.Forbidden:
		return forbidden(component, de.Message, de.Params...)
	case notify.TooSoon:
		e := newError(http.StatusTooManyRequests, classTooMany, component, de.Message, de.Params...)
		e.header = http.Header{"Retry-After": {strconv.Itoa(int(math.Ceil(de.RetryAfter.Seconds())))}}
		return e
	case notify.Gone:
		return newError(http.StatusGone, classNotFound, component, de.Message, de.Params...)
	}
	return conflict(component, de.Message, de.Params...)
}
