package sms

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSegments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want int
	}{
		{"empty", "", 0},
		{"short", "Revenue fell to 12", 1},
		{"160 GSM", strings.Repeat("a", 160), 1},
		{"161 GSM", strings.Repeat("a", 161), 2},
		{"306 GSM", strings.Repeat("a", 306), 2},
		{"307 GSM", strings.Repeat("a", 307), 3},
		{"GSM accents stay GSM", strings.Repeat("é", 160), 1},
		{"80 extension chars are 160 septets", strings.Repeat("€", 80), 1},
		{"81 extension chars", strings.Repeat("{", 81), 2},
		{"escape ends a part", strings.Repeat("a", 151) + "€" + strings.Repeat("a", 153), 2},
		{"escape pushed to the next part", strings.Repeat("a", 152) + "€" + strings.Repeat("a", 152), 3},
		{"70 UCS-2", strings.Repeat("ž", 70), 1},
		{"71 UCS-2", strings.Repeat("ž", 71), 2},
		{"134 UCS-2", strings.Repeat("ж", 134), 2},
		{"135 UCS-2", strings.Repeat("ж", 135), 3},
		{"one non-GSM char switches encoding", strings.Repeat("a", 100) + "ž", 2},
		{"emoji is two code units", strings.Repeat("😀", 35), 1},
		{"36 emoji", strings.Repeat("😀", 36), 2},
		{"surrogate pair does not straddle parts", strings.Repeat("a", 66) + "😀" + strings.Repeat("a", 66), 3},
		{"tab is not GSM", "a\tb", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Segments(tc.body); got != tc.want {
				t.Fatalf("Segments = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		max  int
		want string
	}{
		{"fits", "Revenue fell", 3, "Revenue fell"},
		{"exactly one segment", strings.Repeat("a", 160), 1, strings.Repeat("a", 160)},
		{"one GSM segment", strings.Repeat("a", 161), 1, strings.Repeat("a", 157) + "..."},
		{"three GSM segments", strings.Repeat("b", 500), 3, strings.Repeat("b", 456) + "..."},
		{"one UCS-2 segment", strings.Repeat("ž", 71), 1, strings.Repeat("ž", 69) + "…"},
		{"two UCS-2 segments", strings.Repeat("ж", 200), 2, strings.Repeat("ж", 133) + "…"},
		{"extension chars count double", strings.Repeat("€", 81), 1, strings.Repeat("€", 78) + "..."},
		{"trailing space dropped", strings.Repeat("a", 156) + " bbbbbbbb", 1, strings.Repeat("a", 156) + "..."},
		{"non-GSM in the cut part", strings.Repeat("a", 200) + "ž", 1, strings.Repeat("a", 157) + "..."},
		{"emoji not split", strings.Repeat("😀", 40), 1, strings.Repeat("😀", 34) + "…"},
		{"zero max means one", strings.Repeat("a", 161), 0, strings.Repeat("a", 157) + "..."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Trim(tc.body, tc.max)
			if got != tc.want {
				t.Fatalf("Trim = %q (%d runes), want %q (%d runes)", got, utf8.RuneCountInString(got), tc.want, utf8.RuneCountInString(tc.want))
			}
			if n := Segments(got); n > max(tc.max, 1) {
				t.Fatalf("trimmed text takes %d segments", n)
			}
		})
	}
}

func FuzzTrim(f *testing.F) {
	f.Add("Revenue fell to 12", 1)
	f.Add(strings.Repeat("a", 400)+"ž", 2)
	f.Add(strings.Repeat("€", 200), 3)
	f.Add(strings.Repeat("😀", 100), 2)
	f.Add("\xff\xfe"+strings.Repeat("x", 300), 1)
	f.Fuzz(func(t *testing.T, body string, maxSegments int) {
		maxSegments = maxSegments%8 + 1
		if maxSegments < 1 {
			maxSegments += 8
		}
		got := Trim(body, maxSegments)
		if n := Segments(got); n > maxSegments {
			t.Fatalf("Trim(%q, %d) = %q takes %d segments", body, maxSegments, got, n)
		}
		if Segments(body) <= maxSegments {
			if got != body {
				t.Fatalf("Trim changed a text that fits: %q -> %q", body, got)
			}
			return
		}
		kept, ok := strings.CutSuffix(got, gsmEllipsis)
		if !ok {
			kept, ok = strings.CutSuffix(got, ucs2Ellipsis)
		}
		if !ok || !strings.HasPrefix(body, kept) {
			t.Fatalf("Trim(%q, %d) = %q is not a prefix and an ellipsis", body, maxSegments, got)
		}
		// Trim drops the spaces before the ellipsis, so a body that only
		// begins with more spaces than fit keeps nothing. One whose first
		// visible character comes within its first 66 keeps at least that:
		// 66 spaces, a character of up to two UCS-2 units and the ellipsis
		// fit a single segment of 70.
		if lead := len(body) - len(strings.TrimLeftFunc(body, isSpace)); len(kept) == 0 && lead < ucs2Single-4 {
			t.Fatalf("Trim(%q, %d) kept nothing", body, maxSegments)
		}
	})
}

// TestTrimBeforeKeepsTheLinks: a long text is cut to make room for the links
// after it, which stay whole.
func TestTrimBeforeKeepsTheLinks(t *testing.T) {
	t.Parallel()
	links := "\nhttps://herald.example.com/f/abc.0.t5x9.sig"
	body := strings.Repeat("Revenue fell in every region. ", 20)
	got := TrimBefore(body, links, 2)
	if !strings.HasSuffix(got, "..."+links) || Segments(got) > 2 {
		t.Fatalf("TrimBefore = %q (%d segments)", got, Segments(got))
	}
	if got := TrimBefore("Short", links, 1); got != "Short"+links {
		t.Errorf("a short text = %q", got)
	}
	if got := TrimBefore(body, strings.Repeat("x", 400), 1); Segments(got) > 1 {
		t.Errorf("a tail longer than the limit is not cut: %d segments", Segments(got))
	}
}
