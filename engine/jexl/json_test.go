package jexl

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

var jsonNames = []string{"subject", "text", "instant", "subscription.title", "subscription.uri", "run.uri"}

func jsonVars(subject string) map[string]string {
	return map[string]string{"subject": subject, "text": "Revenue fell to 12.50\nin the \"West\"", "instant": "2026-03-02T09:01:00Z",
		"subscription.title": "Revenue watch", "subscription.uri": "/svc/projects/p/users/u/subscriptions/s",
		"run.uri": "/svc/projects/p/users/u/subscriptions/s/runs/r"}
}

func TestRenderJSON(t *testing.T) {
	t.Parallel()
	const m = "f:executeMetric('a')"
	cases := []struct {
		name, src string
		value     float64
		subject   string
		want      string
	}{
		{"a number is a raw JSON number", `{"v": ${` + m + `}}`, 1234.5, "", `{"v": 1234.5}`},
		{"a large number has no exponent", `{"v": ${` + m + `}}`, 12345678901, "", `{"v": 12345678901}`},
		{"a tiny number has one", `[${` + m + `}]`, 1e-7, "", `[1e-07]`},
		{"arithmetic", `[${` + m + ` * 2}, ${round(` + m + `)}]`, 2.25, "", `[4.5, 2]`},
		{"no value is null", `{"v": ${` + m + `}, "w": ${` + m + ` + 1}}`, math.NaN(), "", `{"v": null, "w": null}`},
		{"a comparison is true or false", `{"low": ${` + m + ` lt 16}}`, 12, "", `{"low": true}`},
		{"a string is quoted and escaped", `{"s": ${subject}}`, 0, `He said "hi" \ <b>&` + "\n\t\u0001", `{"s": "He said \"hi\" \\ <b>&\n\t\u0001"}`},
		{"inside a string, its content", `{"t": "Alert: ${subject} at ${` + m + `}"}`, 35.5, `"x"`, `{"t": "Alert: \"x\" at 35.5"}`},
		{"inside a string, no value is null", `{"t": "v=${` + m + `}"}`, math.NaN(), "", `{"t": "v=null"}`},
		{"after an escaped quote, still inside", `{"t": "a\"${subject}"}`, 0, `b"c`, `{"t": "a\"b\"c"}`},
		{"after an escaped backslash, outside", `{"t": "a\\", "u": ${subject}}`, 0, "x", `{"t": "a\\", "u": "x"}`},
		{"dotted variables", `{"uri": ${subscription.uri}, "run": "${run.uri}", "title": ${subscription.title}, "at": ${instant}}`, 0, "",
			`{"uri": "/svc/projects/p/users/u/subscriptions/s", "run": "/svc/projects/p/users/u/subscriptions/s/runs/r", "title": "Revenue watch", "at": "2026-03-02T09:01:00Z"}`},
		{"strings join", `{"s": ${subscription.title + ': ' + subject}}`, 0, "down", `{"s": "Revenue watch: down"}`},
		{"a literal ${", `{"s": "\${subject}"}`, 0, "x", `{"s": "${subject}"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := ParseTemplateVars(tc.src, jsonNames)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			out, err := tpl.RenderJSON(map[string]float64{"a": tc.value}, jsonVars(tc.subject))
			if err != nil {
				t.Fatalf("RenderJSON: %v", err)
			}
			if string(out) != tc.want {
				t.Errorf("RenderJSON = %s\nwant          %s", out, tc.want)
			}
		})
	}
}

// TestRenderJSONSaysWhereTheJSONBroke: a template whose result is not JSON
// fails at the line and column of the template that wrote the break, its
// text or an expression.
func TestRenderJSONSaysWhereTheJSONBroke(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src  string
		line, col  int
		wantInText string
	}{
		{"a missing comma after an expression", "{\n  \"text\": ${subject}\n  \"n\": 1\n}", 3, 3, "invalid character"},
		{"an expression where a value cannot stand", "{\"a\": \"x\" ${subject}}", 1, 11, "after object key:value pair"},
		{"a quoted expression in a string", "{\"a\": \"${subject}\", \"b\": \"${subject}}", 1, 37, "the result is not JSON"},
		{"after an escaped ${", "{\"a\": \"\\${x}\" oops}", 1, 15, "invalid character 'o'"},
		{"characters counted, not bytes", "{\"žluť\": 1,\n \"ů\": 1 ]", 2, 9, "invalid character ']'"},
		{"not closed", "{\"a\": ${subject}", 1, 7, "unexpected end of JSON input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := ParseTemplateVars(tc.src, jsonNames)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, err = tpl.RenderJSON(nil, jsonVars("Revenue alert"))
			var e *Error
			if !errors.As(err, &e) || e.Pos < 0 {
				t.Fatalf("RenderJSON = %v, want an *Error with a place", err)
			}
			line, col := LineColumn(tc.src, e.Pos)
			if line != tc.line || col != tc.col || !strings.Contains(e.Msg, tc.wantInText) {
				t.Errorf("line %d, column %d: %s; want line %d, column %d, %q", line, col, e.Msg, tc.line, tc.col, tc.wantInText)
			}
		})
	}
}

func TestTemplateVariables(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		`${subscription.name}`: `unknown variable "subscription.name"`,
		`${subscription}`:      `unknown variable "subscription"`,
		`${subjct}`:            `unknown word "subjct"`,
		`${subject * 2}`:       "",
	} {
		_, err := ParseTemplateVars(src, jsonNames)
		if want == "" {
			if err == nil {
				t.Errorf("%s: a string times a number compiles", src)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	if _, err := ParseTemplate("${subject}"); err == nil {
		t.Error("a message template reads a variable")
	}
}

// FuzzRenderJSON: whatever the subject holds, a template that is JSON
// around its expressions renders JSON, outside strings and inside them;
// and any template either renders JSON or fails with an *Error, without a
// panic.
func FuzzRenderJSON(f *testing.F) {
	f.Add(`{"a": ${subject}, "b": "x${subject}y", "n": ${f:executeMetric('a')}}`, "He said \"hi\"\\\n")
	f.Add(`[${text}, "${instant}"]`, "\u2028\x00</script>")
	f.Add(`{"a": "${subject}`, `\`)
	f.Fuzz(func(t *testing.T, src, subject string) {
		vars := jsonVars(subject)
		fixed, err := ParseTemplateVars(`{"a": ${subject}, "b": "x${subject}y\"${subject}", "c": [${subject}]}`, jsonNames)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := fixed.RenderJSON(nil, vars); err != nil || !json.Valid(out) {
			t.Fatalf("subject %q: %s, %v", subject, out, err)
		}
		tpl, err := ParseTemplateVars(src, jsonNames)
		if err != nil {
			return
		}
		out, err := tpl.RenderJSON(map[string]float64{"a": 1.5}, vars)
		var e *Error
		switch {
		case err == nil && !json.Valid(out):
			t.Fatalf("%q rendered %q, not JSON", src, out)
		case err != nil && !errors.As(err, &e):
			t.Fatalf("%q: %v is no *Error", src, err)
		case e != nil && e.Pos > len(src):
			t.Fatalf("%q: error at %d, past the template", src, e.Pos)
		}
	})
}
