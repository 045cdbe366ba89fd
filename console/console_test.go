package console

import "testing"

func TestFieldNameMapsErrorPaths(t *testing.T) {
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
	for next, want := range map[string]string{
		"/console/channels":       "/console/channels",
		"/console/projects/p?x=1": "/console/projects/p?x=1",
		"https://evil.example/":   "/console/projects",
		"//evil.example/console/": "/console/projects",
		"/svc/account/login":      "/console/projects",
		"/console/\\evil":         "/console/projects",
		"":                        "/console/projects",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
