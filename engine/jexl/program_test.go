package jexl

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

const revenue = "/svc/md/p1/obj/12"

func TestCondition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		src    string
		values map[string]float64
		want   bool
	}{
		{"reference below", "f:executeMetric('/svc/md/p1/obj/12') < 16", map[string]float64{revenue: 15.9}, true},
		{"reference not below", "f:executeMetric('/svc/md/p1/obj/12') < 16", map[string]float64{revenue: 16}, false},
		{"string true", `"true"`, nil, true},
		{"single quoted string true", `'true'`, nil, true},
		{"string false", `"false"`, nil, false},
		{"bare true", "true", nil, true},
		{"bare false", " false ", nil, false},
		{"word operators", "f:executeMetric('a') gt 1 and not (f:executeMetric('a') ge 3)", map[string]float64{"a": 2}, true},
		{"or", "f:executeMetric('a') lt 0 or f:executeMetric('b') eq 5", map[string]float64{"a": 1, "b": 5}, true},
		{"symbols", "!(f:executeMetric('a') <= 1) && f:executeMetric('a') != 3", map[string]float64{"a": 2}, true},
		{"arithmetic precedence", "1 + 2 * 3 == 7", nil, true},
		{"integer and float literals compare", "2 == 2.0", nil, true},
		{"division is not integer division", "7 / 2 == 3.5", nil, true},
		{"div word", "7 div 2 == 3.5", nil, true},
		{"modulo on floats", "7.5 % 2 == 1.5", nil, true},
		{"mod word", "f:executeMetric('a') mod 3 == 1", map[string]float64{"a": 10}, true},
		{"abs", "abs(f:executeMetric('a')) == 4", map[string]float64{"a": -4}, true},
		{"min max", "min(3, f:executeMetric('a'), 5) == 1 and max(3, f:executeMetric('a')) == 3", map[string]float64{"a": 1}, true},
		{"round half away from zero", "round(2.5) == 3 and round(-2.5) == -3", nil, true},
		{"floor ceil", "floor(1.7) == 1 and ceil(1.2) == 2", nil, true},
		{"string comparison", "'abc' == \"abc\"", nil, true},
		{"string concatenation", "'a' + 'b' == 'ab'", nil, true},
		{"division by zero is infinite", "1 / 0 > 1e308", nil, true},
		{"comparison with NaN", "f:executeMetric('a') % 0 == 0", map[string]float64{"a": 1}, false},
		{"uri with words and quotes", `f:executeMetric("a eq 'b' and not c") == 1`, map[string]float64{"a eq 'b' and not c": 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileCondition(tt.src)
			if err != nil {
				t.Fatalf("CompileCondition(%q): %v", tt.src, err)
			}
			got, err := p.EvalBool(tt.values)
			if err != nil {
				t.Fatalf("EvalBool: %v", err)
			}
			if got != tt.want {
				t.Errorf("%s = %v, want %v", tt.src, got, tt.want)
			}
		})
	}
}

func TestConditionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		pos  int
		msg  string
	}{
		{"number", "f:executeMetric('a') + 1", -1, "condition must be true or false, got a number"},
		{"text", "'abc'", -1, "condition must be true or false, got text"},
		{"string True is not coerced", "'True'", -1, "got text"},
		{"parenthesised string is not coerced", "('true')", -1, "got text"},
		{"function result", "max(1, 2)", -1, "got a number"},
		{"mismatched comparison", "f:executeMetric('a') < 'x'", 21, "mismatched types number and string"},
		{"number and bool", "1 == true", 2, "mismatched types number and bool"},
		{"not on a number", "not 1", 0, "mismatched type number"},
		{"and on numbers", "1 and 2", 2, "mismatched types number and number"},
		{"ends too early", "f:executeMetric('a') <", 21, "ends too early"},
		{"call on a value", "true(1)", 4, `unexpected "("`},
		{"two numbers", "1 2 > 0", 2, `unexpected "2"`},
		{"two metric calls", "f:executeMetric('a') f:executeMetric('b')", 21, `unexpected "f:executeMetric('b')"`},
		{"wrong argument count", "abs(1, 2)", 0, "abs"},
		{"string argument", "abs('a')", 4, "abs takes numbers, not text"},
		{"modulo on text", "f:executeMetric('a') % 'x' == 1", 23, "% takes numbers, not text"},
		{"modulo on bool", "true mod 2 == 1", 0, "% takes numbers, not true or false"},
		{"error in a nested call", "max(1, abs()) > 0", 7, "not enough arguments to call abs"},
		{"too many arguments in a nested call", "min(abs(1, 2)) > 0", 4, "too many arguments to call abs"},
		{"too complex", "1" + strings.Repeat("+1", maxNodes) + " > 0", -1, "too complex"},
		{"translation error", "f:executeMetric(x) > 1", 16, "in quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileCondition(tt.src)
			if err == nil {
				t.Fatalf("CompileCondition(%q) compiled %q, want an error", tt.src, p.tr.source)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if e.Pos != tt.pos || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error = {%d %q}, want position %d and a message containing %q", e.Pos, e.Msg, tt.pos, tt.msg)
			}
		})
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		src    string
		values map[string]float64
		want   any
	}{
		{"metric", "f:executeMetric('a')", map[string]float64{"a": 2.5}, 2.5},
		{"integer literal is a float", "16", nil, 16.0},
		{"sum", "f:executeMetric('a') + f:executeMetric('b')", map[string]float64{"a": 1, "b": 2}, 3.0},
		{"string", "'Revenue'", nil, "Revenue"},
		{"string true stays a string", `"true"`, nil, "true"},
		{"bool", "1 < 2", nil, true},
		{"negative zero", "-0", nil, math.Copysign(0, -1)},
		{"infinity", "-1 / 0", nil, math.Inf(-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := CompileValue(tt.src)
			if err != nil {
				t.Fatalf("CompileValue(%q): %v", tt.src, err)
			}
			got, err := p.Eval(tt.values)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.src, got, tt.want)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	p, err := CompileValue("f:executeMetric('b') + f:executeMetric(\"a\") * f:executeMetric('b') - f:executeMetric('c')")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"b", "a", "c"}
	if got := p.Metrics(); !reflect.DeepEqual(got, want) {
		t.Errorf("Metrics() = %q, want %q", got, want)
	}
	p.Metrics()[0] = "changed"
	if got := p.Metrics(); !reflect.DeepEqual(got, want) {
		t.Errorf("Metrics() after changing a returned slice = %q, want %q", got, want)
	}
}

func TestEvalMissingMetric(t *testing.T) {
	t.Parallel()
	p, err := CompileCondition("f:executeMetric('a') > 1 or f:executeMetric('/svc/md/p1/obj/7') > 1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.EvalBool(map[string]float64{"a": 0})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("EvalBool error = %v, want *Error", err)
	}
	if e.Pos != 28 || !strings.Contains(e.Msg, `"/svc/md/p1/obj/7"`) {
		t.Errorf("error = {%d %q}, want position 28 and the URI", e.Pos, e.Msg)
	}
}

func TestEvalBoolOnValue(t *testing.T) {
	t.Parallel()
	p, err := CompileValue("f:executeMetric('a')")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.EvalBool(map[string]float64{"a": 1})
	if err == nil || !strings.Contains(err.Error(), "condition must be true or false, got a number") {
		t.Errorf("EvalBool error = %v, want it to say the result is a number", err)
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"with position", &Error{Pos: 12, Msg: `unknown word "foo"`}, `at offset 12: unknown word "foo"`},
		{"without position", &Error{Pos: -1, Msg: "condition must be true or false, got a number"}, "condition must be true or false, got a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}
