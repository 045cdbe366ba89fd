package api

import (
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestContentDispositionKeepsOnlySafeNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, ascii, full string
	}{
		{"Revenue by region.csv", "Revenue by region.csv", "Revenue by region.csv"},
		{"evil\"\r\nContent-Type: text/html/../../tmp/pwn;.csv", "evil___Content-Type_ text_html_____tmp_pwn_.csv",
			"evil\"\r\nContent-Type: text_html_.._.._tmp_pwn;.csv"},
		{"../../etc/passwd", "____etc_passwd", ".._.._etc_passwd"},
		{".hidden", "hidden", ".hidden"},
		{"Tržby: Q1/Q2 = 100%.pdf", "Tr__by_ Q1_Q2 _ 100_.pdf", "Tržby: Q1_Q2 = 100%.pdf"},
		{"", "download", ""},
	}
	for _, tc := range cases {
		h := contentDisposition(tc.name)
		if strings.ContainsAny(h, "\r\n") {
			t.Fatalf("%q: header %q holds a line break", tc.name, h)
		}
		_, params, err := mime.ParseMediaType(h)
		if err != nil {
			t.Fatalf("%q: header %q does not parse: %v", tc.name, h, err)
		}
		ascii := h[strings.Index(h, `filename="`)+len(`filename="`):]
		ascii = ascii[:strings.IndexByte(ascii, '"')]
		if ascii != tc.ascii {
			t.Errorf("%q: filename=%q, want %q", tc.name, ascii, tc.ascii)
		}
		for _, bad := range []string{"/", "\\", ":", ".."} {
			if strings.Contains(ascii, bad) {
				t.Errorf("%q: filename=%q holds %q", tc.name, ascii, bad)
			}
		}
		if tc.full != "" && params["filename"] != tc.full {
			t.Errorf("%q: filename*=%q, want %q", tc.name, params["filename"], tc.full)
		}
	}
}

// TestCookieMaxAgeIsTheLifetime sets a cookie on a clock that moves between reading the
// expiry and writing the cookie, as a real one does: Max-Age is still the whole lifetime.
func TestCookieMaxAgeIsTheLifetime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s := &Server{now: func() time.Time { at = at.Add(time.Millisecond); return at }}
	rec := httptest.NewRecorder()
	s.setCookie(rec, CookieTT, "token", s.now().Add(10*time.Minute))
	if got := rec.Result().Cookies()[0].MaxAge; got != 600 {
		t.Fatalf("Max-Age %d, want 600", got)
	}
}

// TestAnswersCarryTheirLength: a JSON or YAML answer says its length and goes
// out whole, not chunked; an answer without a body says none.
func TestAnswersCarryTheirLength(t *testing.T) {
	t.Parallel()
	big := map[string]any{"rows": strings.Split(strings.Repeat("a row of a listing,", 2000), ",")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if r.URL.Path == "/none" {
			status = http.StatusNoContent
		}
		respond(w, r, status, big)
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, accept string }{{"/", "application/json"}, {"/", "application/yaml"}, {"/none", ""}} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", tc.accept)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.TransferEncoding) != 0 || resp.ContentLength != int64(len(body)) {
			t.Errorf("%s as %q: transfer encoding %v, length %d, want none and %d", tc.path, tc.accept,
				resp.TransferEncoding, resp.ContentLength, len(body))
		}
		if tc.path == "/" && len(body) < 30000 {
			t.Errorf("%s as %q: %d bytes, want the whole listing", tc.path, tc.accept, len(body))
		}
	}
}
