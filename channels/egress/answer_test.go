package egress_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/egress"
)

func TestAnAnswerSaysWhetherToTryAgain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		status     int
		retryAfter string
		permanent  bool
		after      time.Duration
		redirect   bool
	}{
		{status: 400, permanent: true},
		{status: 404, permanent: true},
		{status: 302, permanent: true, redirect: true},
		{status: 408},
		{status: 429, retryAfter: "7", after: 7 * time.Second},
		{status: 503, retryAfter: now.Add(time.Minute).Format(http.TimeFormat), after: time.Minute},
		{status: 500, retryAfter: "soon"},
	} {
		a := egress.Answer{Status: c.status, Header: http.Header{}}
		if c.retryAfter != "" {
			a.Header.Set("Retry-After", c.retryAfter)
		}
		err := a.Refusal(errors.New("x answered"), now)
		if got := channels.IsPermanent(err); got != c.permanent {
			t.Errorf("%d: permanent = %v, want %v (%v)", c.status, got, c.permanent, err)
		}
		if d, _ := channels.RetryDelay(err); d != c.after {
			t.Errorf("%d %q: retry after %v, want %v", c.status, c.retryAfter, d, c.after)
		}
		if got := strings.Contains(err.Error(), "redirects are not followed"); got != c.redirect {
			t.Errorf("%d: %v", c.status, err)
		}
	}
	if !(egress.Answer{Status: 204}).OK() || (egress.Answer{Status: 301}).OK() {
		t.Error("OK is a 2xx")
	}
}

func TestAnExcerptKeepsSecretsOutOfTheLog(t *testing.T) {
	t.Parallel()
	a := egress.Answer{Body: []byte("  bad signature sig=abcdef for key k  " + strings.Repeat("é", 200))}
	got := a.Excerpt("abcdef", "k")
	if strings.Contains(got, "abcdef") || !strings.Contains(got, "[redacted]") || !strings.Contains(got, "key k") {
		t.Errorf("excerpt %q: the secret is not redacted, or a short one is", got)
	}
	if len(got) > 200+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "bad") {
		t.Errorf("excerpt of %d bytes: %q", len(got), got)
	}
	if c := egress.Cut("aé", 2); c != "a" {
		t.Errorf("Cut inside a UTF-8 sequence: %q", c)
	}
}
