package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Headers of a webhook request.
const (
	HeaderDelivery  = "X-Herald-Delivery"  // the delivery id, also sent as Idempotency-Key
	HeaderTimestamp = "X-Herald-Timestamp" // when the request was signed, in Unix seconds
	HeaderSignature = "X-Herald-Signature" // Sign(secret, timestamp, body)
)

// Sign returns the signature of a request body signed at ts (Unix seconds)
// with the channel's secret: "sha256=" and the lowercase hex of
// HMAC-SHA256(secret, "<ts>.<body>").
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(strconv.AppendInt(nil, ts, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a request a receiver got: its timestamp must be within
// tolerance of now, so that an old request replayed is refused, and its
// signature must be the body's under secret. A receiver should also drop a
// delivery id it has already seen: a retry repeats it.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return errors.New("webhook: missing or malformed " + HeaderTimestamp)
	}
	if age := now.Sub(time.Unix(ts, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("webhook: timestamp %d is more than %s away from now", ts, tolerance)
	}
	if !hmac.Equal([]byte(h.Get(HeaderSignature)), []byte(Sign(secret, ts, body))) {
		return errors.New("webhook: signature does not match")
	}
	return nil
}
