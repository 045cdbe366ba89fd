package configtest

import "testing"

// Case is one bad value: change makes it in the default configuration, and
// the section's Validate is to refuse it with exactly want.
type Case[C any] struct {
	name   string
	change func(*C)
	want   string
}

// Bad is the case name: change makes a value Validate refuses with want.
func Bad[C any](name string, change func(*C), want string) Case[C] {
	return Case[C]{name: name, change: change, want: want}
}

// Check fails t unless defaults() passes validate and every case fails it
// with its want.
func Check[C any](t *testing.T, defaults func() C, validate func(C) error, cases ...Case[C]) {
	t.Helper()
	if err := validate(defaults()); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := defaults()
			tc.change(&c)
			if err := validate(c); err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
