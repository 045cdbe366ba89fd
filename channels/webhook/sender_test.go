package webhook_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/internal/clock"
)

const tolerance = 5 * time.Minute

// newSender builds a sender closed when the test ends.
func newSender(t *testing.T, set *webhook.Settings, env channels.Env) *webhook.Sender {
	t.Helper()
	s, err := webhook.New(set, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// channel is a webhook channel to url, kept as Parse keeps it under set.
func channel(t *testing.T, set *webhook.Settings, url, secret string) channels.Channel {
	t.Helper()
	cfg, err := webhook.Descriptor.Parse(set, channels.Encode(webhook.Endpoint{URL: url}))
	if err != nil {
		t.Fatalf("Parse(%s): %v", url, err)
	}
	return channels.Channel{ID: "ch-1", Kind: webhook.Kind, Config: cfg, Secret: secret}
}

// unchecked is a channel to url that skips Parse, as one kept under other
// settings would.
func unchecked(url, secret string) channels.Channel {
	return channels.Channel{ID: "ch-1", Kind: webhook.Kind, Config: channels.Encode(webhook.Endpoint{URL: url}), Secret: secret}
}

// peer is a webhook receiver: it verifies every request's signature,
// records the deliveries and fails the requests it is told to.
type peer struct {
	t      *testing.T
	srv    *httptest.Server
	ch     channels.Channel
	secret string

	mu       sync.Mutex
	got      []channeltest.Delivery
	requests []*http.Request
	bodies   [][]byte
	failN    int
	failure  channeltest.Failure

	channeltest.HTTPGate
}

func newPeer(t *testing.T, set *webhook.Settings) *peer {
	t.Helper()
	p := &peer{t: t, secret: "whsec-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	p.srv = channeltest.StartHTTP(t, &p.HTTPGate, http.HandlerFunc(p.serve))
	p.ch = channel(t, set, p.srv.URL+"/hooks/herald?token=T0K3N", p.secret)
	return p
}

func (p *peer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := webhook.Verify(p.secret, r.Header, body, time.Now(), tolerance); err != nil {
		p.t.Errorf("receiver: %v", err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, r)
	p.bodies = append(p.bodies, body)
	if p.failN > 0 {
		p.failN--
		if p.failure == channeltest.Permanent {
			http.Error(w, `{"error":"unknown hook"}`, http.StatusBadRequest)
		} else {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
		return
	}
	var pl webhook.Payload
	if err := json.Unmarshal(body, &pl); err != nil {
		p.t.Errorf("receiver: body: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.got = append(p.got, channeltest.Delivery{Key: r.Header.Get("Idempotency-Key"), Subject: pl.Subject, Text: pl.Text})
	w.Header().Set("X-Request-Id", fmt.Sprintf("req-%d", len(p.got)))
	w.WriteHeader(http.StatusAccepted)
}

func (p *peer) Channel() channels.Channel { return p.ch }

func (p *peer) Deliveries() []channeltest.Delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]channeltest.Delivery(nil), p.got...)
}

func (p *peer) Fail(n int, f channeltest.Failure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failN, p.failure = n, f
}

// last returns the last request's headers and body.
func (p *peer) last(t *testing.T) (http.Header, []byte) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.requests) == 0 {
		t.Fatal("the receiver got no request")
	}
	return p.requests[len(p.requests)-1].Header, p.bodies[len(p.bodies)-1]
}

func (p *peer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	channeltest.RunConformance(t, func(t *testing.T, log *slog.Logger) (channels.Sender, channeltest.Peer) {
		set := settings("127.0.0.0/8")
		p := newPeer(t, set)
		return newSender(t, set, channels.Env{Logger: log, SendTimeout: 5 * time.Second}), p
	})
}

// TestSenderKeepsAConnectionPerConcurrentSend: the webhook section's sender
// keeps as many connections to an endpoint open as the kind runs sends at once.
func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	channeltest.CheckConnectionsKept(t, webhook.Descriptor, set, newPeer(t, set))
}

func message(ch channels.Channel, id string) channels.Message {
	return channels.Message{DeliveryID: id, Channel: ch, Subject: "Revenue alert", Text: "Revenue fell to 12.5."}
}

func TestRequest(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	p := newPeer(t, set)
	now := time.Now().Truncate(time.Second)
	s := newSender(t, set, channels.Env{Clock: clock.NowFrom(func() time.Time { return now })})
	twelve := 12.5
	m := message(p.Channel(), "d1")
	m.HTML = "<p>Revenue fell.</p>"
	m.Source = channels.Source{
		Subscription:      "herald:subscription:42",
		SubscriptionTitle: "Revenue <watch> & more",
		Run:               "run-7",
		Instant:           time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC),
		Manual:            true,
		Values:            map[string]*float64{"herald:metric:revenue": &twelve, "herald:metric:missing": nil},
	}
	id, err := s.Send(t.Context(), m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if id != "req-1" {
		t.Errorf("provider id = %q, want the X-Request-Id req-1", id)
	}
	h, body := p.last(t)
	ts := strconv.FormatInt(now.Unix(), 10)
	for name, want := range map[string]string{
		"Content-Type":          "application/json",
		"User-Agent":            "Herald-Webhook/1",
		"Idempotency-Key":       "d1",
		webhook.HeaderDelivery:  "d1",
		webhook.HeaderTimestamp: ts,
		webhook.HeaderSignature: webhook.Sign(p.secret, now.Unix(), body),
		"Content-Length":        strconv.Itoa(len(body)),
		"Authorization":         "",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if !strings.HasPrefix(h.Get(webhook.HeaderSignature), "sha256=") {
		t.Errorf("signature %q lacks sha256=", h.Get(webhook.HeaderSignature))
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body: %v", err)
	}
	want := map[string]any{
		"deliveryId":        "d1",
		"subscription":      "herald:subscription:42",
		"subscriptionTitle": "Revenue <watch> & more",
		"run":               "run-7",
		"instant":           "2026-01-01T08:00:00Z",
		"manual":            true,
		"resolved":          false,
		"subject":           "Revenue alert",
		"text":              "Revenue fell to 12.5.",
		"values":            map[string]any{"herald:metric:revenue": 12.5, "herald:metric:missing": nil},
		"attachments":       []any{},
	}
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Errorf("body = %s\nwant   %s", g, w)
	}
}

func TestRequestWithoutSource(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	p := newPeer(t, set)
	if _, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(p.Channel(), "d1")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	_, body := p.last(t)
	if bytes.Contains(body, []byte(`"instant"`)) {
		t.Errorf("body has an instant for a message no run made: %s", body)
	}
	for _, want := range []string{`"values":{}`, `"attachments":[]`, `"run":""`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
}

// resolver answers from a map, as DNS under someone else's control might.
type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if addrs, ok := r[host]; ok {
		return addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// counter is a receiver that counts the requests it gets and accepts them.
func counter(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// detail is what a send's error tells the log: the cause behind what it
// says to the channel's owner.
func detail(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if !channels.IsUnreachable(e) {
			return e.Error()
		}
	}
	return ""
}

// loopbackOnly is a Settings.Dial that dials loopback addresses and fails
// the test, dialling nothing, for any other: tests connect to this machine only.
func loopbackOnly(t *testing.T, dialled *atomic.Int32) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialled.Add(1)
		ap, err := netip.ParseAddrPort(addr)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			t.Errorf("the guard let %s be dialled", addr)
			return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("not dialled by the test")}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func TestConnectTimeGuard(t *testing.T) {
	t.Parallel()
	srv, requests := counter(t)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	name := "hooks.example.test:" + port
	cases := []struct {
		name     string
		allow    []string
		resolves []netip.Addr
		url      string
		want     string // error text, "" for delivered
	}{
		{"name resolving to loopback", nil, addrs("127.0.0.1"), "https://" + name + "/hook",
			"webhook: hooks.example.test resolves to 127.0.0.1, a loopback address, refused unless webhook.allowNetworks admits it"},
		{"allowed network", []string{"127.0.0.0/8"}, addrs("127.0.0.1"), "http://" + name + "/hook", ""},
		{"one address of several internal", nil, addrs("8.8.8.8", "127.0.0.1"), "https://" + name + "/hook",
			"hooks.example.test resolves to 127.0.0.1, a loopback address"},
		{"IPv4-mapped private address", nil, addrs("::ffff:10.0.0.1"), "https://" + name + "/hook",
			"hooks.example.test resolves to 10.0.0.1, a private address"},
		{"cloud metadata", nil, addrs("169.254.169.254"), "https://" + name + "/hook", "169.254.169.254, the cloud metadata address"},
		{"cloud metadata over IPv6", nil, addrs("fd00:ec2::254"), "https://" + name + "/hook", "fd00:ec2::254, the cloud metadata address"},
		{"carrier-grade NAT", nil, addrs("100.100.1.1"), "https://" + name + "/hook", "100.100.1.1, a carrier-grade NAT address"},
		{"benchmarking", nil, addrs("198.18.0.1"), "https://" + name + "/hook", "198.18.0.1, a benchmarking address"},
		{"reserved", nil, addrs("240.0.0.1"), "https://" + name + "/hook", "240.0.0.1, a reserved address"},
		{"IETF protocol assignment", nil, addrs("192.0.0.8"), "https://" + name + "/hook", "192.0.0.8, an IETF protocol assignment"},
		{"NAT64 of loopback", nil, addrs("64:ff9b::7f00:1"), "https://" + name + "/hook",
			"64:ff9b::7f00:1, the NAT64 form of 127.0.0.1, a loopback address"},
		{"NAT64 of loopback, allowed as IPv4 only", []string{"127.0.0.0/8"}, addrs("64:ff9b::7f00:1"), "https://" + name + "/hook",
			"the NAT64 form of 127.0.0.1"},
		{"6to4 of loopback", nil, addrs("2002:7f00:1::"), "https://" + name + "/hook", "2002:7f00:1::, the 6to4 form of 127.0.0.1"},
		{"IPv4-compatible loopback", nil, addrs("::127.0.0.1"), "https://" + name + "/hook", "::7f00:1, an IPv4-compatible address"},
		{"IPv4-translated loopback", nil, addrs("::ffff:0:7f00:1"), "https://" + name + "/hook", "an IPv4-translated address"},
		{"plain http outside the allowed networks", []string{"127.0.0.0/8"}, addrs("8.8.8.8"), "http://" + name + "/hook",
			"hooks.example.test resolves to 8.8.8.8, outside webhook.allowNetworks"},
		{"literal address kept under other settings", nil, nil, "https://127.0.0.1:" + port + "/hook", "127.0.0.1 is a loopback address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := settings(tc.allow...)
			set.Resolver = resolver{"hooks.example.test": tc.resolves}
			var dialled atomic.Int32
			set.Dial = loopbackOnly(t, &dialled)
			before := requests.Load()
			_, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(unchecked(tc.url, "whsec-guard"), "d1"))
			got := requests.Load() - before
			if tc.want == "" {
				if err != nil || got != 1 {
					t.Fatalf("Send = %v with %d requests, want it delivered", err, got)
				}
				return
			}
			if !channels.IsPermanent(err) || !strings.Contains(detail(err), tc.want) {
				t.Fatalf("Send = %v, want a permanent error saying %q", err, tc.want)
			}
			if got != 0 || dialled.Load() != 0 {
				t.Fatalf("the receiver got %d requests, %d dials", got, dialled.Load())
			}
			if strings.Contains(err.Error(), "whsec-guard") || strings.Contains(err.Error(), "/hook") {
				t.Fatalf("the error reveals the secret or the path: %v", err)
			}
		})
	}
}

// TestConnectTimeGuardRefusesTheHostsOwnAddresses: a name that resolves to an
// address of one of this host's interfaces, or to an IPv6 form of one, is
// refused when the sender connects, and nothing is dialled. The host's
// addresses are read again once they are a minute old, not at every send.
func TestConnectTimeGuardRefusesTheHostsOwnAddresses(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	own := interfaces("127.0.0.1/8", "9.9.9.9/24")
	set := settings()
	set.InterfaceAddrs = func() ([]net.Addr, error) { reads.Add(1); return own() }
	set.Resolver = resolver{"a.example.test": addrs("9.9.9.9"), "b.example.test": addrs("::ffff:9.9.9.9"),
		"c.example.test": addrs("64:ff9b::909:909")}
	var dialled atomic.Int32
	set.Dial = loopbackOnly(t, &dialled)
	s := newSender(t, set, channels.Env{})
	if n := reads.Load(); n != 1 {
		t.Errorf("the interfaces were read %d times at start, want once", n)
	}
	for url, want := range map[string]string{
		"https://a.example.test/hook": "a.example.test resolves to 9.9.9.9, an address of this host",
		"https://b.example.test/hook": "b.example.test resolves to 9.9.9.9, an address of this host",
		"https://c.example.test/hook": "the NAT64 form of 9.9.9.9, an address of this host",
		"https://9.9.9.9/hook":        "9.9.9.9 is an address of this host",
	} {
		_, err := s.Send(t.Context(), message(unchecked(url, "s"), "d1"))
		if !channels.IsPermanent(err) || !strings.Contains(detail(err), want) {
			t.Errorf("%s: Send = %v, want a permanent error saying %q", url, err, want)
		}
	}
	if dialled.Load() != 0 {
		t.Errorf("%d dials", dialled.Load())
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("the interfaces were read %d times, want once: they are kept for a minute", n)
	}
}

// TestLocalhostRefused: localhost is refused at save, and a channel kept
// under other settings is refused when it is sent to.
func TestLocalhostRefused(t *testing.T) {
	t.Parallel()
	srv, requests := counter(t)
	url := "https://localhost:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port) + "/hook"
	if _, err := webhook.Descriptor.Parse(settings(), channels.Encode(webhook.Endpoint{URL: url})); err == nil {
		t.Fatal("Parse admitted localhost")
	}
	_, err := newSender(t, settings(), channels.Env{}).Send(t.Context(), message(unchecked(url, "whsec-local"), "d1"))
	if !channels.IsPermanent(err) || !strings.Contains(err.Error(), "localhost names this host") {
		t.Fatalf("Send = %v, want a permanent error saying that localhost names this host", err)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

func TestUnknownNameIsTransient(t *testing.T) {
	t.Parallel()
	set := settings()
	set.Resolver = resolver{}
	_, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(unchecked("https://nowhere.example.test/", "s"), "d1"))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a transient error", err)
	}
}

// fixed is a receiver that answers every request with status, header and body.
func fixed(t *testing.T, status int, header http.Header, body string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestResponses(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	const secret = "whsec-resp"
	cases := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		id        string // provider id when delivered
		permanent bool
		delay     time.Duration // Retry-After; 0: none
		want      string        // in the error
	}{
		{"accepted with a request id", 200, http.Header{"X-Request-Id": {"rq-9"}}, "", "rq-9", false, 0, ""},
		{"accepted without a request id", 204, nil, "", "204 d1", false, 0, ""},
		{"too many requests", 429, http.Header{"Retry-After": {"7"}}, "slow down", "", false, 7 * time.Second, "answered 429 Too Many Requests"},
		{"unavailable until a date", 503, http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, "", "", false, 90 * time.Second, "503 Service Unavailable"},
		{"Retry-After capped at an hour", 503, http.Header{"Retry-After": {"86400"}}, "", "", false, time.Hour, "503"},
		{"Retry-After in the past", 503, http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, "", "", false, 0, "503"},
		{"server error without Retry-After", 500, nil, "oops", "", false, -1, "500 Internal Server Error"},
		{"request timeout", 408, nil, "", "", false, -1, "408"},
		{"not found", 404, nil, "no such hook", "", true, -1, "404 Not Found"},
		{"unauthorized", 401, nil, "", "", true, -1, "401 Unauthorized"},
		{"redirect", 302, http.Header{"Location": {"/elsewhere"}}, "", "", true, -1, "302 Found: redirects are not followed"},
		{"secret echoed", 400, nil, "bad signature for " + secret, "", true, -1, "400 Bad Request"},
	}
	set := settings("127.0.0.0/8")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, requests := fixed(t, tc.status, tc.header, tc.body)
			var log bytes.Buffer
			s := newSender(t, set, channels.Env{Clock: clock.NowFrom(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&log, nil))})
			id, err := s.Send(t.Context(), message(channel(t, set, srv.URL+"/hook", secret), "d1"))
			if requests.Load() != 1 {
				t.Fatalf("the receiver got %d requests, want 1", requests.Load())
			}
			if tc.id != "" {
				if err != nil || id != tc.id {
					t.Fatalf("Send = %q, %v; want %q", id, err, tc.id)
				}
				return
			}
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if channels.IsPermanent(err) != tc.permanent {
				t.Fatalf("IsPermanent = %v, want %v (err: %v)", !tc.permanent, tc.permanent, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "/hook") {
				t.Errorf("error reveals the secret or the path: %v", err)
			}
			// The body is the receiver's to say: the log has it, the error, which its owner reads, not.
			if tc.body != "" && (strings.Contains(err.Error(), tc.body) || strings.Contains(err.Error(), "bad signature")) {
				t.Errorf("error quotes the body: %v", err)
			}
			if want := strings.ReplaceAll(tc.body, secret, "[redacted]"); !strings.Contains(log.String(), "d1") ||
				!strings.Contains(log.String(), want) || strings.Contains(log.String(), secret) {
				t.Errorf("the log lacks the delivery or the body %q, or reveals the secret: %s", want, log.String())
			}
			d, ok := channels.RetryDelay(err)
			if tc.delay >= 0 && (!ok || d != tc.delay) || tc.delay < 0 && ok {
				t.Errorf("RetryDelay = %v, %v; want %v", d, ok, tc.delay)
			}
		})
	}
}

// TestErrorBodyIsNeverQuoted: the error of a refusal says the status and
// nothing of the body; the log quotes its first 200 bytes.
func TestErrorBodyIsNeverQuoted(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	srv, _ := fixed(t, 400, nil, strings.Repeat("z", 100<<10))
	var log bytes.Buffer
	s := newSender(t, set, channels.Env{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	_, err := s.Send(t.Context(), message(channel(t, set, srv.URL, "s"), "d1"))
	if err == nil {
		t.Fatal("Send succeeded")
	}
	if strings.Contains(err.Error(), "z") {
		t.Fatalf("the error quotes the body: %.300s", err)
	}
	if n := strings.Count(log.String(), "z"); n != 200 {
		t.Fatalf("the log quotes %d bytes of the body, want 200: %.300s", n, log.String())
	}
}

func TestNetworkErrorsAreTransient(t *testing.T) {
	t.Parallel()
	addr := channeltest.ClosedPort(t)
	set := settings("127.0.0.0/8")
	_, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(channel(t, set, "http://"+addr+"/hook", "whsec-net"), "d1"))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send to a closed port = %v, want a transient error", err)
	}
}

// TestUnreachableSaysOnePhrase: whatever keeps a send from an answer, be it
// a closed port, a port that closes the connection, one that speaks
// garbage or plain text to a TLS client, the error says only "could not
// reach the receiver", transient; so a channel's owner cannot tell from it
// what listens at an address. The log says what happened.
func TestUnreachableSaysOnePhrase(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	var log bytes.Buffer
	s := newSender(t, set, channels.Env{Logger: slog.New(slog.NewTextHandler(&log, nil)), SendTimeout: 5 * time.Second})
	for what, url := range map[string]string{
		"closed port":             "http://" + channeltest.ClosedPort(t) + "/hook",
		"closes after reading":    "http://" + channeltest.Speaker(t, nil) + "/hook",
		"answers garbage":         "http://" + channeltest.Speaker(t, []byte("SSH-2.0-OpenSSH_9.6\r\n")) + "/hook",
		"answers a line of HTTP":  "http://" + channeltest.Speaker(t, []byte("HTTP/1.1 200\r\n")) + "/hook",
		"TLS to a plain port":     "https://" + channeltest.Speaker(t, []byte("HTTP/1.1 400 Bad Request\r\n\r\n")) + "/hook",
		"TLS to a closing port":   "https://" + channeltest.Speaker(t, nil) + "/hook",
		"TLS to a closed port":    "https://" + channeltest.ClosedPort(t) + "/hook",
		"TLS to a garbage answer": "https://" + channeltest.Speaker(t, []byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28}) + "/hook",
	} {
		before := log.Len()
		_, err := s.Send(t.Context(), message(channel(t, set, url, "whsec-x"), "d1"))
		if err == nil || err.Error() != channels.UnreachableText || !channels.IsUnreachable(err) || channels.IsPermanent(err) {
			t.Errorf("%s: Send = %v, want a transient %q and nothing more", what, err, channels.UnreachableText)
		}
		if line := log.String()[before:]; !strings.Contains(line, "webhook receiver not reached") || !strings.Contains(line, "d1") {
			t.Errorf("%s: the log says %q", what, line)
		}
	}
}

func TestTimeoutIsTransient(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select { // never answers
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first
	set := settings("127.0.0.0/8")
	_, err := newSender(t, set, channels.Env{SendTimeout: 50 * time.Millisecond}).Send(t.Context(), message(channel(t, set, srv.URL, "s"), "d1"))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a transient error", err)
	}
}

func TestMissingSecretIsPermanent(t *testing.T) {
	t.Parallel()
	srv, requests := counter(t)
	set := settings("127.0.0.0/8")
	_, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(channel(t, set, srv.URL, ""), "d1"))
	if !channels.IsPermanent(err) || requests.Load() != 0 {
		t.Fatalf("Send = %v with %d requests, want a permanent error and none", err, requests.Load())
	}
}

func TestAttachments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	small := []byte("month,revenue\n2026-01,12.5\n")
	third := bytes.Repeat([]byte{0xff, 0x00}, 150)
	set := settings("127.0.0.0/8")
	set.MaxInlineBytes = 1024
	p := newPeer(t, set)
	m := message(p.Channel(), "d1")
	m.Attachments = []channels.Attachment{
		{Name: "revenue.csv", ContentType: "text/csv", Path: write("a.csv", small)},
		{Name: "big.bin", ContentType: "application/octet-stream", Path: write("b.bin", make([]byte, 2000))},
		{Path: write("chart.bin", third)}, // still fits after the big one is left out
	}
	if _, err := newSender(t, set, channels.Env{}).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	_, body := p.last(t)
	var got struct {
		Attachments []map[string]any `json:"attachments"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body: %v", err)
	}
	if len(got.Attachments) != 3 {
		t.Fatalf("body lists %d attachments, want 3: %s", len(got.Attachments), body)
	}
	inline := func(a map[string]any, want []byte) {
		t.Helper()
		s, _ := a["content"].(string)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || !bytes.Equal(b, want) || a["size"] != float64(len(want)) || a["omitted"] != nil {
			t.Errorf("attachment %v: content %q (%v), want the file's %d bytes", a["name"], b, err, len(want))
		}
	}
	inline(got.Attachments[0], small)
	if a := got.Attachments[0]; a["name"] != "revenue.csv" || a["contentType"] != "text/csv" {
		t.Errorf("attachment 0 = %v", a)
	}
	if a := got.Attachments[1]; a["omitted"] != "larger than webhook.maxInlineBytes" || a["content"] != nil || a["size"] != float64(2000) || a["name"] != "big.bin" {
		t.Errorf("attachment 1 = %v, want it listed as omitted without content", a)
	}
	inline(got.Attachments[2], third)
	if a := got.Attachments[2]; a["name"] != "chart.bin" || a["contentType"] != "application/octet-stream" {
		t.Errorf("attachment 2 = %v, want its name from the path and a default type", a)
	}
}

func TestAttachmentEdgeCases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	set := settings("127.0.0.0/8")
	set.MaxInlineBytes = 0
	p := newPeer(t, set)
	s := newSender(t, set, channels.Env{})

	m := message(p.Channel(), "d1")
	m.Attachments = []channels.Attachment{{Name: "empty.txt", Path: empty}}
	if _, err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, body := p.last(t); !bytes.Contains(body, []byte(`"size":0,"content":""`)) {
		t.Errorf("an empty file is not inline as empty content: %s", body)
	}

	m = message(p.Channel(), "d2")
	m.Attachments = []channels.Attachment{{Name: "gone.pdf", Path: filepath.Join(dir, "gone.pdf")}}
	if _, err := s.Send(t.Context(), m); !channels.IsPermanent(err) {
		t.Fatalf("Send with a missing attachment = %v, want a permanent error", err)
	}
	m.Attachments = []channels.Attachment{{Name: "dir", Path: dir}}
	if _, err := s.Send(t.Context(), m); !channels.IsPermanent(err) {
		t.Fatalf("Send with a folder as attachment = %v, want a permanent error", err)
	}
	if n := p.count(); n != 1 {
		t.Fatalf("the receiver got %d requests, want 1", n)
	}
}

// TestHTTPSWithAnIntranetCA delivers over https to an endpoint whose
// certificate a CA in webhook.caFile issued, and refuses it without that file.
func TestHTTPSWithAnIntranetCA(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	set := settings("127.0.0.0/8")
	set.CAFile = ca
	if _, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(channel(t, set, srv.URL+"/hook", "s"), "d1")); err != nil {
		t.Fatalf("Send over https: %v", err)
	}
	set = settings("127.0.0.0/8")
	_, err := newSender(t, set, channels.Env{}).Send(t.Context(), message(channel(t, set, srv.URL+"/hook", "s"), "d2"))
	if err == nil || got.Load() != 1 {
		t.Fatalf("Send without the CA = %v; the endpoint got %d requests, want the first only", err, got.Load())
	}
	bad := filepath.Join(t.TempDir(), "bad.pem")
	_ = os.WriteFile(bad, []byte("not a certificate"), 0o600)
	set.CAFile = bad
	if err := set.Validate(); err == nil || !strings.Contains(err.Error(), "caFile") {
		t.Fatalf("Validate with a file of no certificate = %v", err)
	}
}
