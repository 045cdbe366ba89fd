package mailcheck

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
	const subs, metrics = 6, 3
	subOf := map[string]string{}
	for i := range subs {
		subOf[fmt.Sprint("d", i)] = fmt.Sprintf("bench%06d", i)
	}
	mail := func(i int, v string) (textproto.MIMEHeader, []byte) {
		return textproto.MIMEHeader{"Message-Id": {fmt.Sprintf("<d%d@herald.test>", i)}},
			fmt.Appendf(nil, "--b\r\nRevenue %s\r\n--b\r\n<p>Revenue %s</p>", v, v)
	}
	fill := func(skip int, wrong map[int]string) *Values {
		v := NewValues(subs)
		for i := range subs {
			if i == skip {
				continue
			}
			val := fmt.Sprintf("1,000,%03d.50", i%metrics)
			if w, ok := wrong[i]; ok {
				val = w
			}
			v.See(mail(i, val))
		}
		return v
	}
	sum, err := fill(-1, nil).Check(subs, metrics, subOf)
	if err != nil {
		t.Fatalf("all right: %v", err)
	}
	if again, _ := fill(-1, nil).Check(subs, metrics, subOf); again != sum {
		t.Errorf("checksum %x then %x of the same values", sum, again)
	}
	if _, err := fill(-1, map[int]string{4: "1,000,000.50"}).Check(subs, metrics, subOf); err == nil || !strings.Contains(err.Error(), "subscription 4") {
		t.Errorf("a wrong value: %v", err)
	}
	if _, err := fill(2, nil).Check(subs, metrics, subOf); err == nil || !strings.Contains(err.Error(), "subscription 2") {
		t.Errorf("a missing mail: %v", err)
	}
	v := fill(-1, nil)
	v.See(mail(1, "1,000,001.50"))
	if _, err := v.Check(subs, metrics, subOf); err == nil {
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
