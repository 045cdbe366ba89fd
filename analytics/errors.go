package analytics

import "fmt"

// InputError is a request the service refuses for what it asks. Field is the path of the
// request field at fault (e.g. "metric.content.expression"), when there is one.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func invalid(field, format string, args ...any) *InputError {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// NotFoundError is an object, dataset or task that the project does not have.
type NotFoundError struct {
	Kind string // "object", "dataset" or "task"
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %s not found", e.Kind, e.ID) }

// ConflictError is a change that clashes with what the project has, such as an
// identifier already in use.
type ConflictError struct {
	Msg string
}

func (e *ConflictError) Error() string { return e.Msg }

// InUseError is an object that cannot be deleted because other objects use it.
type InUseError struct {
	URI   string
	Users []Object
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s is used by %d objects", e.URI, len(e.Users))
}
