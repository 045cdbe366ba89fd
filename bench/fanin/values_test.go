package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestValuesCheck: the check passes when every subscription mailed its own
// metric's value once, and fails on a wrong value, a missing mail and a
// mail that came twice.
func TestValuesCheck(t *testing.T) {
	t.Parallel()
	o := options{subs: 6, metrics: 3}
	mail := func(i int, v string) []byte {
		return fmt.Appendf(nil, "Subject: x\r\n\r\nbench%06d: Revenue %s\r\n<p>bench%06d: Revenue %s</p>", i, v, i, v)
	}
	fill := func(skip int, wrong map[int]string) *values {
		v := newValues(o.subs)
		for i := range o.subs {
			if i == skip {
				continue
			}
			val := fmt.Sprintf("1,000,%03d.50", i%o.metrics)
			if w, ok := wrong[i]; ok {
				val = w
			}
			v.see(nil, mail(i, val))
		}
		return v
	}
	sum, err := fill(-1, nil).check(o)
	if err != nil {
		t.Fatalf("all right: %v", err)
	}
	if again, _ := fill(-1, nil).check(o); again != sum {
		t.Errorf("checksum %x then %x of the same values", sum, again)
	}
	if _, err := fill(-1, map[int]string{4: "1,000,000.50"}).check(o); err == nil || !strings.Contains(err.Error(), "subscription 4") {
		t.Errorf("a wrong value: %v", err)
	}
	if _, err := fill(2, nil).check(o); err == nil || !strings.Contains(err.Error(), "subscription 2") {
		t.Errorf("a missing mail: %v", err)
	}
	v := fill(-1, nil)
	v.see(nil, mail(1, "1,000,001.50"))
	if _, err := v.check(o); err == nil {
		t.Error("a mail that came twice passed")
	}
}

func FuzzParseValue(f *testing.F) {
	f.Add([]byte("bench000042: Revenue 1,234.50\r\n"))
	f.Add([]byte("bench12: Revenue"))
	f.Add([]byte("bench-00001: Revenue 5"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sub, val, ok := parseValue(body)
		if ok && (sub < 0 || val == "") {
			t.Fatalf("parseValue(%q) = %d, %q, true", body, sub, val)
		}
	})
}
