package jexl

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// TestPrevious: f:previous reads the value a metric had at the last fire,
// null when there is none, and null is a literal to compare it with.
func TestPrevious(t *testing.T) {
	const drop = "f:previous('m') != null and f:executeMetric('m') <= 0.9 * f:previous('m')"
	p, err := CompileCondition(drop)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Previous(); !reflect.DeepEqual(got, []string{"m"}) {
		t.Errorf("Previous() = %v", got)
	}
	if got := p.Metrics(); !reflect.DeepEqual(got, []string{"m"}) {
		t.Errorf("Metrics() = %v", got)
	}
	for _, tc := range []struct {
		name   string
		values map[string]float64
		want   bool
	}{
		{"first fire", map[string]float64{"m": 50}, false},
		{"null before", map[string]float64{"m": 50, PreviousKey("m"): math.NaN()}, false},
		{"steady", map[string]float64{"m": 100, PreviousKey("m"): 100}, false},
		{"5% down", map[string]float64{"m": 95, PreviousKey("m"): 100}, false},
		{"10% down", map[string]float64{"m": 90, PreviousKey("m"): 100}, true},
	} {
		got, err := p.EvalBool(tc.values)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	// Without the null guard, the first fire cannot compute: a typed error.
	bare, err := CompileCondition("f:executeMetric('m') < 0.9 * f:previous('m')")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.EvalBool(map[string]float64{"m": 1}); !errors.Is(err, ErrNoPrevious) {
		t.Errorf("null previous: %v, want ErrNoPrevious", err)
	}
	if _, err := CompileCondition("f:previous('m') == null"); err != nil {
		t.Errorf("null literal: %v", err)
	}
	if _, err := CompileCondition("f:previous()"); err == nil {
		t.Error("f:previous() without a URI compiled")
	}
	if _, err := CompileCondition("f:prior('m') > 1"); err == nil {
		t.Error("f:prior compiled")
	}
}

// TestPreviousInTemplates: a previous value is written in its metric's
// format, a null one, or an expression that needs it, as NoValue in text
// and null in JSON.
func TestPreviousInTemplates(t *testing.T) {
	tpl, err := ParseTemplate("was ${f:previous('m')}, change ${round((f:executeMetric('m') - f:previous('m')) * 100 / f:previous('m'))}%")
	if err != nil {
		t.Fatal(err)
	}
	if got := tpl.Previous(); !reflect.DeepEqual(got, []string{"m"}) {
		t.Errorf("Previous() = %v", got)
	}
	format := func(uri string, v float64) string { return uri + "=" + formatNumber(v) }
	got, err := tpl.Render(map[string]float64{"m": 90, PreviousKey("m"): 100}, format)
	if err != nil || got != "was m=100, change -10%" {
		t.Errorf("Render = %q, %v", got, err)
	}
	got, err = tpl.Render(map[string]float64{"m": 90}, format)
	if err != nil || got != "was (no value), change (no value)%" {
		t.Errorf("Render at the first fire = %q, %v", got, err)
	}
	js, err := ParseTemplate(`{"was": ${f:previous('m')}, "text": "${f:previous('m')}"}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := js.RenderJSON(map[string]float64{"m": 1}, nil)
	if err != nil || string(out) != `{"was": null, "text": "null"}` {
		t.Errorf("RenderJSON = %s, %v", out, err)
	}
}
