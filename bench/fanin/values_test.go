package main

import (
	"fmt"
	"net/textproto"
	"strings"
	"testing"
)

// TestValuesCheck: the check passes when every subscription mailed its own
// metric's value once, and fails on a wrong value, a missing mail and a
// mail that came twice.
func TestValuesCheck(t *testing.T) {
	t.Parallel()
	o := options{subs: 6, metrics: 3}
	subOf := map[string]string{}
	for i := range o.subs {
		subOf[fmt.Sprint("d", i)] = fmt.Sprintf("bench%06d", i)
	}
	mail := func(i int, v string) (textproto.MIMEHeader, []byte) {
		return textproto.MIMEHeader{"Message-Id": {fmt.Sprintf("<d%d@herald.test>", i)}},
			fmt.Appendf(nil, "--b\r\nRevenue %s\r\n--b\r\n<p>Revenue %s</p>", v, v)
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
			v.see(mail(i, val))
		}
		return v
	}
	sum, err := fill(-1, nil).check(o, subOf)
	if err != nil {
		t.Fatalf("all right: %v", err)
	}
	if again, _ := fill(-1, nil).check(o, subOf); again != sum {
		t.Errorf("checksum %x then %x of the same values", sum, again)
	}
	if _, err := fill(-1, map[int]string{4: "1,000,000.50"}).check(o, subOf); err == nil || !strings.Contains(err.Error(), "subscription 4") {
		t.Errorf("a wrong value: %v", err)
	}
	if _, err := fill(2, nil).check(o, subOf); err == nil || !strings.Contains(err.Error(), "subscription 2") {
		t.Errorf("a missing mail: %v", err)
	}
	v := fill(-1, nil)
	v.see(mail(1, "1,000,001.50"))
	if _, err := v.check(o, subOf); err == nil {
		t.Error("a mail that came twice passed")
	}
}

func FuzzParseValue(f *testing.F) {
	f.Add([]byte("Revenue 1,234.50\r\n"))
	f.Add([]byte("Revenue"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if val, ok := parseValue(body); ok && val == "" {
			t.Fatalf("parseValue(%q) = %q, true", body, val)
		}
	})
}
