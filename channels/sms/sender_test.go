package sms_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/sms"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	channeltest.RunConformance(t, func(t *testing.T, _ *slog.Logger) (channels.Sender, channeltest.Peer) {
		srv := channeltest.NewTwilioServer(t)
		return sms.New(sms.Config{BaseURL: srv.URL(), Timeout: 5 * time.Second}), srv
	})
}

func message(ch channels.Channel) channels.Message {
	return channels.Message{DeliveryID: "d1", Channel: ch, Subject: "Revenue alert", Text: "Revenue fell to 12."}
}

func TestSendClassifiesTwilioErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		status    int
		code      int
		permanent bool
	}{
		{"invalid To number", 400, 21211, true},
		{"not a mobile number", 400, 21614, true},
		{"unsubscribed recipient", 400, 21610, true},
		{"region not permitted", 400, 21408, true},
		{"unknown 4xx code", 400, 99999, true},
		{"bad credentials", 401, 20003, true},
		{"forbidden", 403, 20403, true},
		{"unknown account", 404, 20404, true},
		{"queue full", 400, 21611, false},
		{"too many requests", 429, 20429, false},
		{"internal error", 500, 20500, false},
		{"bad gateway", 502, 0, false},
		{"unavailable", 503, 20503, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewTwilioServer(t)
			s := sms.New(sms.Config{BaseURL: srv.URL()})
			srv.FailNext(1, tc.status, tc.code)
			_, err := s.Send(t.Context(), message(srv.Channel()))
			if err == nil {
				t.Fatal("Send succeeded through a refusal")
			}
			if got := channels.IsPermanent(err); got != tc.permanent {
				t.Fatalf("IsPermanent = %v, want %v (err: %v)", got, tc.permanent, err)
			}
		})
	}
}

func TestSendValidationByTheAPI(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTwilioServer(t)
	s := sms.New(sms.Config{BaseURL: srv.URL()})
	cases := []struct {
		name string
		edit func(*channels.Channel)
	}{
		{"invalid To", func(c *channels.Channel) { *c = channeltest.SetField(*c, "to", "12345") }},
		{"missing From", func(c *channels.Channel) { *c = channeltest.SetField(*c, "from", "") }},
		{"wrong auth token", func(c *channels.Channel) { c.Secret = "0123456789abcdef0123456789abcdef" }},
		{"SID with illegal characters", func(c *channels.Channel) { *c = channeltest.SetField(*c, "username", "AC/../x") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := srv.Channel()
			tc.edit(&ch)
			_, err := s.Send(t.Context(), message(ch))
			if !channels.IsPermanent(err) {
				t.Fatalf("Send = %v, want a permanent error", err)
			}
			if strings.Contains(err.Error(), ch.Secret) {
				t.Fatalf("error reveals the auth token: %v", err)
			}
		})
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("server accepted %d messages", n)
	}
}

func TestSendBody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		subject, text string
		maxSegments   int
		want          string
	}{
		{"subject and text", "Revenue alert", "Revenue fell to 12.", 3, "Revenue alert\nRevenue fell to 12."},
		{"text only", "", "Revenue fell to 12.", 3, "Revenue fell to 12."},
		{"subject only", "Revenue alert", "  ", 3, "Revenue alert"},
		{"trimmed to one segment", "Alert", strings.Repeat("x", 200), 1, "Alert\n" + strings.Repeat("x", 151) + "..."},
		{"default of three segments", "", strings.Repeat("y", 600), 0, strings.Repeat("y", 456) + "..."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.NewTwilioServer(t)
			s := sms.New(sms.Config{BaseURL: srv.URL(), MaxSegments: tc.maxSegments})
			m := message(srv.Channel())
			m.Subject, m.Text = tc.subject, tc.text
			sid, err := s.Send(t.Context(), m)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := srv.Messages()
			if len(got) != 1 {
				t.Fatalf("server has %d messages, want 1", len(got))
			}
			if got[0].Body != tc.want {
				t.Errorf("body = %q, want %q", got[0].Body, tc.want)
			}
			if got[0].SID != sid || got[0].From != channeltest.Field(m.Channel, "from") || got[0].To != channeltest.Field(m.Channel, "to") {
				t.Errorf("server recorded %+v, sender returned sid %q", got[0], sid)
			}
		})
	}
}

func TestSendEmptyMessageIsPermanent(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTwilioServer(t)
	m := message(srv.Channel())
	m.Subject, m.Text = "", " \n"
	if _, err := sms.New(sms.Config{BaseURL: srv.URL()}).Send(t.Context(), m); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error", err)
	}
	if srv.Requests() != 0 {
		t.Fatal("an empty message reached the API")
	}
}

// A proxy in front of the API answers with its own bodies, not Twilio's JSON.
func TestSendClassifiesNonJSONErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		status    int
		permanent bool
	}{
		{"bad gateway page", http.StatusBadGateway, false},
		{"rate limited page", http.StatusTooManyRequests, false},
		{"forbidden page", http.StatusForbidden, true},
		{"not found page", http.StatusNotFound, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte("<html><body>proxy says no</body></html>"))
			}))
			defer srv.Close()
			ch := channeltest.NewTwilioServer(t).Channel()
			_, err := sms.New(sms.Config{BaseURL: srv.URL}).Send(t.Context(), message(ch))
			if err == nil || channels.IsPermanent(err) != tc.permanent {
				t.Fatalf("Send = %v, want permanent %v", err, tc.permanent)
			}
		})
	}
}

func TestSendBaseURL(t *testing.T) {
	t.Parallel()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"sid":"SM1","status":"queued"}`))
	}))
	defer srv.Close()
	ch := channeltest.NewTwilioServer(t).Channel()
	if _, err := sms.New(sms.Config{BaseURL: srv.URL + "/compat/"}).Send(t.Context(), message(ch)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if want := "/compat/2010-04-01/Accounts/" + channeltest.Field(ch, "username") + "/Messages.json"; len(paths) != 1 || paths[0] != want {
		t.Fatalf("requests went to %v, want %s", paths, want)
	}
}

func TestSendAcceptedWithoutSIDIsPermanent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"status":"queued"`))
	}))
	defer srv.Close()
	ch := channeltest.NewTwilioServer(t).Channel()
	if _, err := sms.New(sms.Config{BaseURL: srv.URL}).Send(t.Context(), message(ch)); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error (a retry could send twice)", err)
	}
}

func TestSendNetworkErrorsAreTransient(t *testing.T) {
	t.Parallel()
	addr := channeltest.ClosedPort(t)
	ch := channeltest.NewTwilioServer(t).Channel()
	_, err := sms.New(sms.Config{BaseURL: "http://" + addr}).Send(t.Context(), message(ch))
	if err == nil || channels.IsPermanent(err) {
		t.Fatalf("Send to a closed port = %v, want a transient error", err)
	}
	if strings.Contains(err.Error(), ch.Secret) {
		t.Fatalf("error reveals the auth token: %v", err)
	}
}

func TestSendBadBaseURLIsPermanent(t *testing.T) {
	t.Parallel()
	ch := channeltest.NewTwilioServer(t).Channel()
	if _, err := sms.New(sms.Config{BaseURL: "not a url"}).Send(t.Context(), message(ch)); !channels.IsPermanent(err) {
		t.Fatalf("Send = %v, want a permanent error", err)
	}
}

// TestSenderKeepsAConnectionPerConcurrentSend: the sms section's sender keeps
// as many connections to the API open as the kind runs sends at once.
func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTwilioServer(t)
	set := sms.DefaultSettings()
	set.BaseURL = srv.URL()
	channeltest.CheckConnectionsKept(t, sms.Descriptor, set, srv)
}
