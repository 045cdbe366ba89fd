package console

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/heraldhq/herald/wire"
)

func TestFieldNameMapsErrorPaths(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"subscription.meta.title":                            "title",
		"subscription.triggers[2].timerEvent.cronExpression": "trigger_cron_2",
		"subscription.triggers[0].timerEvent.timezone":       "trigger_tz_0",
		"subscription.triggers":                              "trigger_cron_0",
		"subscription.condition.condition.expression":        "condition",
		"subscription.message.template.expression":           "message",
		"subscription.message.html.expression":               "message_html",
		"subscription.subject.template.expression":           "subject",
		"subscription.channels[1]":                           "channels",
		"subscription.attachments[3].formats[0]":             "report_3",
		"subscription.resolvedMessage.template.expression":   "fire_mode",
		"subscription.somethingNew":                          "",
	} {
		if got := fieldName(path); got != want {
			t.Errorf("fieldName(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestSafeNextStaysInTheConsole(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/console/channels":         "/console/channels",
		"/console/projects/p?x=1":   "/console/projects/p?x=1",
		"https://evil.example/":     "/console/projects",
		"//evil.example/console/":   "/console/projects",
		"/svc/account/login":        "/console/projects",
		"/console/\\evil":           "/console/projects",
		"":                          "/console/projects",
		"/console/\t/evil.example":  "/console/projects",
		"/console/\x00":             "/console/projects",
		"/\t/evil.example":          "/console/projects",
		"/console/a//evil":          "/console/projects",
		"/console/%2F%2Fevil":       "/console/projects",
		"/console/%09x":             "/console/projects",
		"/console/../svc/x":         "/console/projects",
		"/console/./channels":       "/console/projects",
		"/console/channels#x":       "/console/projects",
		"/console/a b":              "/console/projects",
		"/console/é":                "/console/projects",
		"/console/":                 "/console/",
		"/console/projects/":        "/console/projects/",
		"/console/p/s?page=2&x=%20": "/console/p/s?page=2&x=%20",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}

// FuzzSafeNext: whatever it is given, safeNext answers the console home or a path
// of the console that a browser cannot read as another host or another path.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/console/channels", "/console/\t/x", "//evil", "/console/%2e%2e/svc", "/console/p?x=1#y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got == consoleHome {
			return
		}
		u, err := url.Parse(got)
		if got != next || err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(u.Path, Prefix) ||
			path.Clean(u.Path) != strings.TrimSuffix(u.Path, "/") || strings.ContainsAny(got, "\\\t\r\n\x00 ") ||
			strings.Contains(got, "//") || strings.Contains(u.Path, "//") {
			t.Fatalf("safeNext(%q) = %q", next, got)
		}
	})
}

// TestFormKeepsWhatItDoesNotEdit: saving the form keeps a subscription's
// onEmpty, sendWhen and each attachment's newRowsBy, which only the API
// sets, while the attachment keeps its report.
func TestFormKeepsWhatItDoesNotEdit(t *testing.T) {
	t.Parallel()
	s := &wire.Subscription{OnEmpty: new("skip"), SendWhen: new("changed"),
		Attachments: []wire.Attachment{{Report: "/r/1", Formats: []string{"CSV"}, NewRowsBy: new("/d/1")}, {Report: "/r/2", NewRowsBy: new("/d/2")}}}
	r := &http.Request{PostForm: url.Values{"title": {"T"}, "report_0": {"/r/1"}, "formats_0": {"PDF"}, "report_1": {"/r/3"}}}
	readForm(r, s)
	if str(s.OnEmpty) != "skip" || str(s.SendWhen) != "changed" || len(s.Attachments) != 2 ||
		str(s.Attachments[0].NewRowsBy) != "/d/1" || s.Attachments[1].NewRowsBy != nil {
		t.Errorf("after the form: %+v", s)
	}
}
