package teams_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/egress"
	"github.com/heraldhq/herald/channels/teams"
)

// settings are the teams section's defaults with the webhook's guard
// admitting allow.
func settings(allow ...string) *teams.Settings {
	s := teams.DefaultSettings()
	s.Egress = func() egress.Config { return egress.Config{AllowNetworks: allow, Key: "webhook.allowNetworks"} }
	return s
}

func newSender(t *testing.T, set *teams.Settings, env channels.Env) *teams.Sender {
	t.Helper()
	s, err := teams.New(set, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	channeltest.RunConformance(t, func(t *testing.T, log *slog.Logger) (channels.Sender, channeltest.Peer) {
		return newSender(t, settings("127.0.0.0/8"), channels.Env{Logger: log, SendTimeout: 5 * time.Second}), channeltest.NewTeamsServer(t)
	})
}

// TestSenderKeepsAConnectionPerConcurrentSend: the section's sender keeps
// as many connections to a workflow open as the kind runs sends at once.
func TestSenderKeepsAConnectionPerConcurrentSend(t *testing.T) {
	t.Parallel()
	channeltest.CheckConnectionsKept(t, teams.Descriptor, settings("127.0.0.0/8"), channeltest.NewTeamsServer(t))
}

// report is a message of a run with the demo's report: its text, the value
// the condition saw, the report's table in the HTML and the PDF attached,
// with a download link when links says so.
func report(t *testing.T, ch channels.Channel, regions int, links bool) channels.Message {
	t.Helper()
	g := &grid.Grid{Title: "Revenue by region", Format: grid.FormatChart, RowHeaders: []string{"Region"},
		Columns: []grid.Column{{Path: []string{"Revenue"}, Format: "#,##0.00"}},
		Rows: func(yield func(grid.Row, error) bool) {
			for i := range regions {
				v := 1234.5 * float64(i+1)
				if !yield(grid.Row{Headers: []string{fmt.Sprintf("Region *%d* [x](https://evil.test)", i)}, Values: []*float64{&v}}, nil) {
					return
				}
			}
		}}
	var b bytes.Buffer
	if err := render.HTML(&b, g, 50); err != nil {
		t.Fatal(err)
	}
	pdf := filepath.Join(t.TempDir(), "revenue.pdf")
	if err := os.WriteFile(pdf, []byte("%PDF-1.4"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := 35.5
	m := channels.Message{DeliveryID: "d-report", Channel: ch, Subject: "Revenue alert",
		Text: "Revenue so far: 35.50\n**not bold**\n\nSecond paragraph",
		HTML: channels.TextHTML("Revenue so far: 35.50") + b.String(),
		Attachments: []channels.Attachment{{Name: "Revenue by region.pdf", ContentType: "application/pdf", Path: pdf},
			{Name: "chart.png", Path: pdf, ContentID: "chart-1@herald"}},
		Source: channels.Source{Subscription: "/svc/projects/p/users/u/subscriptions/s", Values: map[string]*float64{"/svc/md/p/obj/12": &v, "/svc/md/p/obj/13": nil}}}
	if links {
		m.Links.Files = []channels.FileLink{{Name: "Revenue by region.pdf", URL: "https://herald.example.com/f/abc.0.sig"}}
	}
	return m
}

// TestCardShowsTheReport: the card has the subject as its title, the text a
// line a block (Markdown shown as it is), the values as facts, the report's
// table with its header and regions in their number format, and one "Open"
// action per file with its download link; the chart of the HTML body is no
// file of its own.
func TestCardShowsTheReport(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTeamsServer(t)
	s := newSender(t, settings("127.0.0.0/8"), channels.Env{})
	id, err := s.Send(t.Context(), report(t, srv.Channel(), 3, true))
	if err != nil {
		t.Fatalf("Send: %v (refused: %v)", err, srv.Refused())
	}
	c := srv.Cards()[0]
	if id != c.RunID {
		t.Errorf("provider id %q, want the workflow run %q", id, c.RunID)
	}
	want := []string{"Revenue alert", "Revenue so far: 35.50", "**not bold**", "Second paragraph", "Revenue by region"}
	if got := c.Texts; len(got) < len(want) || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("texts = %q, want them to start %q", got, want)
	}
	if fmt.Sprint(c.Facts) != "[[/svc/md/p/obj/12 35.5] [/svc/md/p/obj/13 no value]]" {
		t.Errorf("facts = %q", c.Facts)
	}
	rows := fmt.Sprint(c.Rows)
	if rows != "[[Region Revenue] [Region *0* [x](https://evil.test) 1,234.50] [Region *1* [x](https://evil.test) 2,469.00] [Region *2* [x](https://evil.test) 3,703.50]]" {
		t.Errorf("rows = %s", rows)
	}
	if len(c.Actions) != 1 || c.Actions[0] != (channeltest.TeamsAction{Title: "Open Revenue by region.pdf", URL: "https://herald.example.com/f/abc.0.sig"}) {
		t.Errorf("actions = %+v", c.Actions)
	}
	body, _ := json.Marshal(c.Card)
	if bytes.Contains(body, []byte(`"TextBlock"`)) {
		t.Errorf("the card has a TextBlock, whose text Teams reads as Markdown: %s", body)
	}
}

// TestCardWithoutLinksSaysTheFilesAreInTheConsole: without publicURL a
// message has no download links, and the card says where the files are.
func TestCardWithoutLinksSaysTheFilesAreInTheConsole(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTeamsServer(t)
	if _, err := newSender(t, settings("127.0.0.0/8"), channels.Env{}).Send(t.Context(), report(t, srv.Channel(), 1, false)); err != nil {
		t.Fatal(err)
	}
	c := srv.Cards()[0]
	if len(c.Actions) != 0 || !strings.Contains(strings.Join(c.Texts, "\n"), "The files (Revenue by region.pdf) are in Herald's console") {
		t.Errorf("actions %+v, texts %q", c.Actions, c.Texts)
	}
}

// TestCardCapsRowsAndFitsTeams: a long table shows its first 20 rows and
// says how many more the file has; a message that would pass Teams' 28 KB
// shows fewer rows and less text, and the fake takes it.
func TestCardCapsRowsAndFitsTeams(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTeamsServer(t)
	s := newSender(t, settings("127.0.0.0/8"), channels.Env{})
	m := report(t, srv.Channel(), 120, true)
	if _, err := s.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	c := srv.Cards()[0]
	if len(c.Rows) != 21 || !strings.Contains(strings.Join(c.Texts, "\n"), "and 100 more rows in the attached file") {
		t.Errorf("%d rows, texts %q", len(c.Rows), c.Texts)
	}
	m.DeliveryID, m.Text = "d-big", strings.Repeat("Revenue fell everywhere. ", 2000)
	if _, err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("Send of a long text: %v (refused %v)", err, srv.Refused())
	}
	body, err := teams.Body(m)
	if err != nil || len(body) > teams.MaxBytes {
		t.Fatalf("Body = %d bytes, %v", len(body), err)
	}
}

// TestOutcomes: 200 and 202 deliver; 429 and 5xx may pass later after the
// Retry-After; 408 too; other 4xx and redirects never will.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status     int
		retryAfter string
		permanent  bool
		delay      time.Duration
	}{
		{http.StatusOK, "", false, 0},
		{http.StatusAccepted, "", false, 0},
		{http.StatusTooManyRequests, "7", false, 7 * time.Second},
		{http.StatusServiceUnavailable, "", false, 0},
		{http.StatusBadGateway, "120", false, 2 * time.Minute},
		{http.StatusRequestTimeout, "", false, 0},
		{http.StatusBadRequest, "", true, 0},
		{http.StatusNotFound, "", true, 0},
		{http.StatusUnauthorized, "", true, 0},
		{http.StatusFound, "", true, 0},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.Header().Set("Location", "https://elsewhere.example.com/")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(`{"error":{"code":"X","message":"sig=SIGNATURE-123 echoed"}}`))
			}))
			t.Cleanup(srv.Close)
			ch := channels.Channel{ID: "c", Kind: teams.Kind, Secret: srv.URL + "/workflows/w1/triggers/manual/paths/invoke?api-version=1&sig=SIGNATURE-123"}
			var log bytes.Buffer
			s := newSender(t, settings("127.0.0.0/8"), channels.Env{Logger: slog.New(slog.NewTextHandler(&log, nil))})
			_, err := s.Send(t.Context(), channels.Message{DeliveryID: "d1", Channel: ch, Subject: "s", Text: "t"})
			ok := tc.status == 200 || tc.status == 202
			switch {
			case ok && err != nil:
				t.Fatalf("Send = %v, want it sent", err)
			case !ok && err == nil:
				t.Fatal("Send succeeded")
			case !ok && channels.IsPermanent(err) != tc.permanent:
				t.Fatalf("Send = %v, permanent %v, want %v", err, channels.IsPermanent(err), tc.permanent)
			}
			if d, _ := channels.RetryDelay(err); d != tc.delay {
				t.Errorf("retry delay %v, want %v", d, tc.delay)
			}
			if strings.Contains(log.String(), "SIGNATURE-123") || err != nil && strings.Contains(err.Error(), "SIGNATURE-123") {
				t.Errorf("the signature leaks: %v\n%s", err, log.String())
			}
		})
	}
}

// TestGuardAtConnect: a workflow URL whose name resolves to an internal
// address is refused when the sender connects, for good and without a
// request; plain http outside webhook.allowNetworks is refused at save.
func TestGuardAtConnect(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	set := teams.DefaultSettings()
	set.Egress = func() egress.Config {
		return egress.Config{Key: "webhook.allowNetworks", Resolver: resolver{"flows.example.test": "127.0.0.1"}}
	}
	ch := channels.Channel{ID: "c", Kind: teams.Kind, Secret: fmt.Sprintf("https://flows.example.test:%d/workflows/w/triggers/manual/paths/invoke?sig=S1G", port)}
	_, err := newSender(t, set, channels.Env{}).Send(t.Context(), channels.Message{DeliveryID: "d1", Channel: ch, Subject: "s", Text: "t"})
	if !channels.IsPermanent(err) || !channels.IsUnreachable(err) || requests.Load() != 0 {
		t.Fatalf("Send = %v with %d requests, want a permanent refusal and none", err, requests.Load())
	}
	if detail := errorsChain(err); !strings.Contains(detail, "teams: flows.example.test resolves to 127.0.0.1, a loopback address, refused unless webhook.allowNetworks admits it") {
		t.Errorf("the refusal says %q", detail)
	}
}

// resolver answers each name with one address.
type resolver map[string]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// errorsChain is every message in err's chain, for what the log gets.
func errorsChain(err error) string {
	var parts []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, " | ")
}
