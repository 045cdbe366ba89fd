package maql

import "fmt"

// Pos is a position in the source text: a 1-based line and a 1-based column counted in
// characters.
type Pos struct {
	Line, Col int
}

// Position returns p. Statements embed Pos, so every statement reports where it starts.
func (p Pos) Position() Pos { return p }

// Error is a syntax error at a position of the source.
type Error struct {
	Line, Col int
	// Token is the source text of the offending token; empty at the end of the input.
	Token string
	// Msg explains the error, for example `unexpected "FOO", expected TYPE`.
	Msg string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}
