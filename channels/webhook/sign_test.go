package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/webhook"
)

func TestSign(t *testing.T) {
	t.Parallel()
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(`1767254400.{"a":1}`))
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := webhook.Sign("s3cret", 1767254400, []byte(`{"a":1}`)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	const secret = "whsec-test"
	now := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	body := []byte(`{"deliveryId":"d1","subject":"Revenue alert"}`)
	signed := func(ts time.Time, b []byte) http.Header {
		h := http.Header{}
		h.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
		h.Set(webhook.HeaderSignature, webhook.Sign(secret, ts.Unix(), b))
		return h
	}
	cases := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		ok     bool
	}{
		{"good", secret, signed(now, body), body, true},
		{"within tolerance", secret, signed(now.Add(-4*time.Minute), body), body, true},
		{"tampered body", secret, signed(now, body), []byte(`{"deliveryId":"d1","subject":"All is well"}`), false},
		{"older than tolerance", secret, signed(now.Add(-6*time.Minute), body), body, false},
		{"too far ahead", secret, signed(now.Add(6*time.Minute), body), body, false},
		{"other secret", "whsec-other", signed(now, body), body, false},
		{"no timestamp", secret, http.Header{webhook.HeaderSignature: {webhook.Sign(secret, now.Unix(), body)}}, body, false},
		{"no signature", secret, http.Header{webhook.HeaderTimestamp: {strconv.FormatInt(now.Unix(), 10)}}, body, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify(tc.secret, tc.header, tc.body, now, 5*time.Minute)
			if (err == nil) != tc.ok {
				t.Fatalf("Verify = %v, want ok %v", err, tc.ok)
			}
		})
	}
	// The timestamp is signed: moving it forward breaks the signature.
	h := signed(now.Add(-time.Hour), body)
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	if err := webhook.Verify(secret, h, body, now, 5*time.Minute); err == nil {
		t.Fatal("Verify accepted a replay with a fresh timestamp")
	}
}
