package app_test

import (
	"slices"
	"testing"

	"github.com/heraldhq/herald/app"
)

// TestKindsDescribeTheirForms: every kind lists the fields the console's
// channel form asks for, its secret among them, with an input type a browser knows.
func TestKindsDescribeTheirForms(t *testing.T) {
	gate.Parallel(t)
	for _, d := range app.Kinds.All() {
		if len(d.Fields) == 0 {
			t.Errorf("%s lists no fields", d.Kind)
		}
		keys := make([]string, 0, len(d.Fields))
		for _, f := range d.Fields {
			keys = append(keys, f.Key)
			if !slices.Contains([]string{"email", "tel", "url", "password", "text", "textarea"}, f.Type) || f.Label == "" {
				t.Errorf("%s.%s: type %q, label %q", d.Kind, f.Key, f.Type, f.Label)
			}
			if (f.Key == d.Secret) != (f.Type == "password") {
				t.Errorf("%s.%s: only the secret is a password field", d.Kind, f.Key)
			}
		}
		if d.Secret != "" && !slices.Contains(keys, d.Secret) {
			t.Errorf("%s: the secret %q is not among the fields %v", d.Kind, d.Secret, keys)
		}
	}
}
