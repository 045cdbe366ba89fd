package channeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald/channels"
)

// Failure is how a peer answers a delivery it was told to fail.
type Failure int

const (
	// Transient is an answer after which the same delivery may pass later
	// (SMTP 451, HTTP 429 or 503).
	Transient Failure = iota + 1
	// Permanent is an answer after which the delivery can never pass
	// (SMTP 550, Twilio 21211, Chatter 400).
	Permanent
)

func (f Failure) String() string {
	switch f {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	}
	return fmt.Sprintf("Failure(%d)", int(f))
}

// Delivery is one message a peer accepted, reduced to what every kind has.
type Delivery struct {
	Key     string // idempotency key as seen on the wire (Message-ID, Idempotency-Key header)
	Subject string // empty where the kind has no subject of its own
	Text    string // the text as the recipient sees it
}

// Peer is the far end a sender under test talks to.
type Peer interface {
	// Channel returns a channel configuration the peer accepts.
	Channel() channels.Channel
	// Deliveries returns what the peer accepted, oldest first.
	Deliveries() []Delivery
	// Fail makes the peer reject the next n deliveries with f.
	Fail(n int, f Failure)
}

// Setup builds a fresh sender and its peer for one conformance case. The
// sender logs, if it logs at all, to logger.
type Setup func(t *testing.T, logger *slog.Logger) (channels.Sender, Peer)

// fixture is one conformance case's sender, peer and captured log.
type fixture struct {
	sender channels.Sender
	peer   Peer
	log    *slog.Logger
	buf    *syncBuffer
	secret string
	serial int
}

func newFixture(t *testing.T, setup Setup) *fixture {
	t.Helper()
	buf := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sender, peer := setup(t, log)
	f := &fixture{sender: sender, peer: peer, log: log, buf: buf, secret: peer.Channel().Secret}
	t.Cleanup(func() {
		if out := buf.String(); f.secret != "" && strings.Contains(out, f.secret) {
			t.Errorf("the log reveals the channel password:\n%s", out)
		}
	})
	return f
}

// message builds a message to the peer's channel; a channel without a
// password gets a sentinel one so that leaks are still caught.
func (f *fixture) message(t *testing.T, deliveryID string) channels.Message {
	t.Helper()
	ch := f.peer.Channel()
	if ch.Secret == "" {
		ch.Secret = "sentinel-password-never-logged"
		f.secret = ch.Secret
	}
	f.serial++
	return channels.Message{
		DeliveryID: deliveryID,
		Channel:    ch,
		Subject:    fmt.Sprintf("Revenue alert %d", f.serial),
		Text:       fmt.Sprintf("Revenue fell to 12.5 (check %d)", f.serial),
	}
}

// send sends m, logs the outcome as a caller would and checks the error
// string for the password.
func (f *fixture) send(t *testing.T, ctx context.Context, m channels.Message) (string, error) {
	t.Helper()
	id, err := f.sender.Send(ctx, m)
	if err != nil {
		f.log.Warn("delivery failed", "message", m, "err", err)
		for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(s, m.Channel.Secret) {
				t.Errorf("the error reveals the channel password: %s", s)
			}
		}
	} else {
		f.log.Info("delivered", "message", m, "provider_id", id)
	}
	return id, err
}

// RunConformance runs the behaviour every channels.Sender must have against
// the sender and peer that setup builds, one fresh pair per case.
func RunConformance(t *testing.T, setup Setup) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"KindIsKnown", testKind},
		{"SendDelivers", testSendDelivers},
		{"SameDeliverySameKey", testSameKey},
		{"CancelledContext", testCancelled},
		{"PermanentFailure", testPermanent},
		{"TransientFailure", testTransient},
		{"PasswordNeverLeaks", testNoLeak},
		{"ConcurrentSends", testConcurrent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newFixture(t, setup))
		})
	}
}

func testKind(t *testing.T, f *fixture) {
	if k := f.sender.Kind(); k == "" {
		t.Fatal("Kind() is empty")
	}
	if k, want := f.sender.Kind(), f.peer.Channel().Kind; want != "" && k != want {
		t.Fatalf("Kind() = %q, the peer's channel is %q", k, want)
	}
}

func testSendDelivers(t *testing.T, f *fixture) {
	m := f.message(t, "delivery-1")
	id, err := f.send(t, t.Context(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if id == "" {
		t.Fatal("Send returned an empty provider id")
	}
	got := f.peer.Deliveries()
	if len(got) != 1 {
		t.Fatalf("peer received %d messages, want 1", len(got))
	}
	seen := got[0].Subject + "\n" + got[0].Text
	for _, want := range []string{m.Subject, m.Text} {
		if !strings.Contains(seen, want) {
			t.Errorf("peer received %q, which lacks %q", seen, want)
		}
	}
}

func testSameKey(t *testing.T, f *fixture) {
	for _, id := range []string{"delivery-a", "delivery-a", "delivery-b"} {
		if _, err := f.send(t, t.Context(), f.message(t, id)); err != nil {
			t.Fatalf("Send(%s): %v", id, err)
		}
	}
	got := f.peer.Deliveries()
	if len(got) != 3 {
		t.Fatalf("peer received %d messages, want 3", len(got))
	}
	if got[0].Key == "" {
		t.Fatal("the peer saw no idempotency key")
	}
	if got[0].Key != got[1].Key {
		t.Errorf("one delivery id sent twice carried keys %q and %q", got[0].Key, got[1].Key)
	}
	if got[0].Key == got[2].Key {
		t.Errorf("two delivery ids carried the same key %q", got[0].Key)
	}
}

func testCancelled(t *testing.T, f *fixture) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := f.send(t, ctx, f.message(t, "delivery-cancelled"))
	if err == nil {
		t.Fatal("Send with a cancelled context succeeded")
	}
	if channels.IsPermanent(err) {
		t.Fatalf("a cancelled context gave a permanent error: %v", err)
	}
	if n := len(f.peer.Deliveries()); n != 0 {
		t.Fatalf("peer received %d messages after a cancelled send", n)
	}
}

func testPermanent(t *testing.T, f *fixture) {
	f.peer.Fail(1, Permanent)
	_, err := f.send(t, t.Context(), f.message(t, "delivery-p"))
	if err == nil {
		t.Fatal("Send succeeded though the peer failed it")
	}
	if !channels.IsPermanent(err) {
		t.Fatalf("a permanent refusal gave a retryable error: %v", err)
	}
	if n := len(f.peer.Deliveries()); n != 0 {
		t.Fatalf("peer recorded %d deliveries it refused", n)
	}
}

func testTransient(t *testing.T, f *fixture) {
	f.peer.Fail(1, Transient)
	m := f.message(t, "delivery-t")
	_, err := f.send(t, t.Context(), m)
	if err == nil {
		t.Fatal("Send succeeded though the peer failed it")
	}
	if channels.IsPermanent(err) {
		t.Fatalf("a transient refusal gave a permanent error: %v", err)
	}
	if _, err := f.send(t, t.Context(), m); err != nil {
		t.Fatalf("the retry failed: %v", err)
	}
	if n := len(f.peer.Deliveries()); n != 1 {
		t.Fatalf("peer received %d messages after failure and retry, want 1", n)
	}
}

func testNoLeak(t *testing.T, f *fixture) {
	m := f.message(t, "delivery-leak")
	f.peer.Fail(1, Transient)
	_, _ = f.send(t, t.Context(), m)
	f.peer.Fail(1, Permanent)
	_, _ = f.send(t, t.Context(), m)
	if _, err := f.send(t, t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	out := f.buf.String()
	if strings.Contains(out, m.Channel.Secret) {
		t.Fatalf("the log reveals the channel password:\n%s", out)
	}
	if !strings.Contains(out, m.DeliveryID) {
		t.Fatalf("the log does not show the delivery at all:\n%s", out)
	}
}

func testConcurrent(t *testing.T, f *fixture) {
	const n = 16
	msgs := make([]channels.Message, n)
	for i := range msgs {
		msgs[i] = f.message(t, fmt.Sprint("delivery-c", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, m := range msgs {
		wg.Go(func() {
			_, err := f.sender.Send(t.Context(), m)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	keys := map[string]bool{}
	for _, d := range f.peer.Deliveries() {
		keys[d.Key] = true
	}
	if len(keys) != n {
		t.Fatalf("peer received %d distinct deliveries of %d sent at once", len(keys), n)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// config is a channel configuration as the kinds keep it.
func config(fields map[string]string) json.RawMessage {
	b, _ := json.Marshal(fields)
	return b
}

// SetField returns ch with one field of its configuration set to v.
func SetField(ch channels.Channel, field, v string) channels.Channel {
	m := map[string]any{}
	_ = json.Unmarshal(ch.Config, &m)
	m[field] = v
	ch.Config, _ = json.Marshal(m)
	return ch
}

// Field returns one string field of ch's configuration.
func Field(ch channels.Channel, field string) string {
	m := map[string]any{}
	_ = json.Unmarshal(ch.Config, &m)
	s, _ := m[field].(string)
	return s
}
