package webhook_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
)

func withTemplate(tpl string) json.RawMessage {
	return channels.Encode(webhook.Endpoint{URL: "https://hooks.example.com/herald", Template: tpl})
}

// TestTemplateCheckedAtSave: a template is rendered against a sample run
// when it is saved; one whose result is not JSON, or that does not compile,
// is refused on "template" naming the line and column.
func TestTemplateCheckedAtSave(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, tpl, want string }{
		{"kept", "{\"text\": ${subject},\n \"n\": ${f:executeMetric('/svc/md/p/obj/1')}}", ""},
		{"blank is none", "  \n", ""},
		{"quoted by hand", `{"text": "${subject}"}`, ""},
		{"a value quoted twice", "{\n  \"text\": \"${subject}\",\n  \"title\": \"\"${subscription.title}\"\"\n}", "line 3, column 14: the result is not JSON: invalid character '\"' after object key:value pair"},
		{"a missing comma", "{\n  \"text\": ${subject}\n  \"n\": 1\n}", "line 3, column 3: the result is not JSON"},
		{"a value and nothing to hold it", `${subject} ${text}`, "line 1, column 12: the result is not JSON"},
		{"not closed", `{"a": ${subject`, `line 1, column 7: "${" is not closed`},
		{"an unknown variable", "{\n\"a\": ${subscription.name}}", `line 2, column 8: unknown variable "subscription.name"`},
		{"a string times a number", "[${subject * 2}]", "line 1, column 12: invalid operation"},
		{"breaks only without a value", `{"n": -${f:executeMetric('/svc/md/p/obj/1')}}`, "when a metric has no value, the result is not JSON"},
		{"too long", `{"a": "` + strings.Repeat("x", webhook.MaxTemplate) + `"}`, "must be at most 16384 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := webhook.Descriptor.Parse(settings(), withTemplate(tc.tpl))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				var e webhook.Endpoint
				_ = json.Unmarshal(out, &e)
				if strings.TrimSpace(tc.tpl) == "" && e.Template != "" || strings.TrimSpace(tc.tpl) != "" && e.Template != tc.tpl {
					t.Fatalf("kept template %q", e.Template)
				}
				return
			}
			var fe *channels.FieldError
			if !errors.As(err, &fe) || fe.Field != "template" || !strings.Contains(fe.Message, tc.want) {
				t.Fatalf("Parse = %v, want an error on template saying %q", err, tc.want)
			}
		})
	}
}

// TestTemplateBody: with a template the body is what it renders: numbers
// raw, strings quoted and escaped, inside strings their content, a metric
// without a value null, the variables from the run; the request is signed
// as any other.
func TestTemplateBody(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	srv, got := receiver(t)
	const tpl = `{"text": "#### ${subject}\n${text}", "value": ${f:executeMetric('/m/1')}, "none": ${f:executeMetric('/m/2')},` +
		` "other": ${f:executeMetric('/m/3')}, "low": ${f:executeMetric('/m/1') lt 16}, "at": ${instant},` +
		` "sub": ${subscription.title}, "uri": ${subscription.uri}, "run": ${run.uri}}`
	ch := channels.Channel{ID: "ch-1", Kind: webhook.Kind, Secret: "whsec-t",
		Config: channels.Encode(webhook.Endpoint{URL: srv.URL + "/hook", Template: tpl})}
	v := 12.5
	m := channels.Message{DeliveryID: "d1", Channel: ch, Subject: `Revenue "alert"`, Text: "fell\\rose\n<b>",
		Source: channels.Source{Subscription: "/svc/projects/p/users/u/subscriptions/s", SubscriptionTitle: "Revenue watch", Run: "r1",
			Instant: time.Date(2026, 3, 2, 9, 1, 0, 0, time.UTC), Values: map[string]*float64{"/m/1": &v, "/m/2": nil}}}
	if _, err := newSender(t, set, channels.Env{}).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	h, body := got()
	want := `{"text": "#### Revenue \"alert\"\nfell\\rose\n<b>", "value": 12.5, "none": null, "other": null, "low": true, "at": "2026-03-02T09:01:00Z",` +
		` "sub": "Revenue watch", "uri": "/svc/projects/p/users/u/subscriptions/s", "run": "/svc/projects/p/users/u/subscriptions/s/runs/r1"}`
	if string(body) != want {
		t.Errorf("body = %s\nwant   %s", body, want)
	}
	if err := webhook.Verify("whsec-t", h, body, time.Now(), time.Minute); err != nil || h.Get("Content-Type") != "application/json" {
		t.Errorf("signature: %v; content type %q", err, h.Get("Content-Type"))
	}
}

// TestREADMETemplates: the templates the README shows for Mattermost,
// Discord and PagerDuty are kept at save.
func TestREADMETemplates(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "#### Body templates")
	if !ok {
		t.Fatal("the README has no section on body templates")
	}
	section, _, _ = strings.Cut(section, "\n### ")
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) < 3 {
		t.Fatalf("the section shows %d templates, want 3", len(blocks))
	}
	for _, b := range blocks {
		if _, err := webhook.Descriptor.Parse(settings(), withTemplate(b[1])); err != nil {
			t.Errorf("%v:\n%s", err, b[1])
		}
	}
}

// receiver records the last request's headers and body.
func receiver(t *testing.T) (*httptest.Server, func() (http.Header, []byte)) {
	var mu sync.Mutex
	var h http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		h, body = r.Header, b
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, func() (http.Header, []byte) {
		mu.Lock()
		defer mu.Unlock()
		return h, body
	}
}

// TestTemplatePrevious: a template reads the previous values the run read
// with f:previous, null where there is none, and the change computed from
// them.
func TestTemplatePrevious(t *testing.T) {
	t.Parallel()
	set := settings("127.0.0.0/8")
	srv, got := receiver(t)
	const tpl = `{"was": ${f:previous('/m/1')}, "now": ${f:executeMetric('/m/1')},` +
		` "change": ${round((f:executeMetric('/m/1') - f:previous('/m/1')) * 100 / f:previous('/m/1'))}, "other": ${f:previous('/m/2')}}`
	ch := channels.Channel{ID: "ch-1", Kind: webhook.Kind, Secret: "whsec-t",
		Config: channels.Encode(webhook.Endpoint{URL: srv.URL + "/hook", Template: tpl})}
	now, was := 90.0, 100.0
	m := channels.Message{DeliveryID: "d1", Channel: ch, Subject: "Drop",
		Source: channels.Source{Values: map[string]*float64{"/m/1": &now}, Previous: map[string]*float64{"/m/1": &was, "/m/2": nil}}}
	if _, err := newSender(t, set, channels.Env{}).Send(t.Context(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, body := got(); string(body) != `{"was": 100, "now": 90, "change": -10, "other": null}` {
		t.Errorf("body = %s", body)
	}
}
