package revenue

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSameComparesNamesAndCents(t *testing.T) {
	a := Result{{"Region 001", "Product 00001", 12.34}, {"Region 002", "Product 00001", 0.1 + 0.2}}
	b := Result{{"Region 002", "Product 00001", 0.3}, {"Region 001", "Product 00001", 12.34}}
	if err := Same(a, "a", b, "b"); err != nil {
		t.Fatalf("same rows in another order: %v", err)
	}
	for name, c := range map[string]struct {
		b    Result
		want string
	}{
		"amount":  {Result{{"Region 001", "Product 00001", 12.35}, {"Region 002", "Product 00001", 0.3}}, "row 0 differs"},
		"label":   {Result{{"Region 001", "Product 00002", 12.34}, {"Region 002", "Product 00001", 0.3}}, "row 0 differs"},
		"missing": {Result{{"Region 001", "Product 00001", 12.34}}, "first extra"},
		"extra":   {append(b, Row{"Region 003", "Product 00001", 1}), "first missing"},
	} {
		err := Same(a, "a", c.b, "b")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
}

func TestXTabResultReadsRowHeaders(t *testing.T) {
	const page = `{"rows": {"lookups": [{"7": "Region 001", "9": "Region 002"}, {"1": "Product 00001", "2": "Product 00002"}],
		"tree": {"id": null, "type": "root", "first": 0, "last": 2, "children": [
			{"id": "7", "first": 0, "last": 1, "children": [{"id": "1", "first": 0, "last": 0}, {"id": "2", "first": 1, "last": 1}]},
			{"id": "9", "first": 2, "last": 2, "children": [{"id": "2", "first": 2, "last": 2}]}]}},
		"data": [["1.5"], ["2"], ["1234567.89"]], "overall_size": {"rows": 3, "columns": 1}}`
	var x XTab
	if err := json.Unmarshal([]byte(page), &x); err != nil {
		t.Fatal(err)
	}
	got, err := x.Result()
	if err != nil {
		t.Fatal(err)
	}
	want := Result{{"Region 001", "Product 00001", 1.5}, {"Region 001", "Product 00002", 2}, {"Region 002", "Product 00002", 1234567.89}}
	if err := Same(got, "got", want, "want"); err != nil || len(got) != 3 {
		t.Fatalf("got %v: %v", got, err)
	}
	x.Data = x.Data[:2]
	if _, err := x.Result(); err == nil {
		t.Error("a page with fewer rows than the result: no error")
	}
}
