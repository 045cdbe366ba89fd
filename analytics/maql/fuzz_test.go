package maql

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
)

func FuzzParseScript(f *testing.F) {
	for _, tc := range scriptCases {
		f.Add(tc.src)
	}
	if src, err := os.ReadFile("testdata/devs.maql"); err == nil {
		f.Add(string(src))
	}
	f.Add("DROP {a} /* x */ -- y\n; ALTER DATATYPE {t.c} DECIMAL(38,38)")
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := ParseScript(src)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || perr.Line < 1 || perr.Col < 1 {
				t.Fatalf("ParseScript(%q) error %#v is not a positioned *Error", src, err)
			}
			return
		}
		text := FormatScript(stmts)
		again, err := ParseScript(text)
		if err != nil {
			t.Fatalf("ParseScript(%q) parsed, its formatted form %q did not: %v", src, text, err)
		}
		if !reflect.DeepEqual(withoutPos(again), withoutPos(stmts)) {
			t.Fatalf("round trip of %q through %q changed the statements", src, text)
		}
	})
}

func FuzzParseMetric(f *testing.F) {
	for _, tc := range metricCases {
		f.Add(tc.src)
	}
	f.Add(`SELECT {f} WHERE {a} IN ("q\"\\", "") BY ALL OTHER DIMENSIONS, ALL {y}, {q}`)
	f.Add("SELECT - - {a} - -1 / (SELECT IFNULL({b}, -0.5))")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := ParseMetric(src)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || perr.Line < 1 || perr.Col < 1 {
				t.Fatalf("ParseMetric(%q) error %#v is not a positioned *Error", src, err)
			}
			return
		}
		text := m.String()
		again, err := ParseMetric(text)
		if err != nil {
			t.Fatalf("ParseMetric(%q) parsed, its canonical form %q did not: %v", src, text, err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip of %q through %q changed the tree", src, text)
		}
		if _, err := json.Marshal(m.Tree()); err != nil {
			t.Fatalf("Tree of %q does not encode: %v", src, err)
		}
		for _, r := range m.Refs() {
			if !r.valid() {
				t.Fatalf("Refs of %q returned invalid reference %#v", src, r)
			}
		}
	})
}
