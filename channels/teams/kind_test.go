package teams_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/egress"
	"github.com/heraldhq/herald/channels/teams"
	"github.com/heraldhq/herald/channels/webhook"
)

const workflow = "https://prod-12.westeurope.logic.azure.com:443/workflows/0a1b2c/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=S1GNATURE"

// TestParseSecret: the workflow URL is checked by the webhook's guard and
// kept as the secret; the configuration shows only its host.
func TestParseSecret(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		allow []string
		url   string
		want  string // error text, "" for kept
	}{
		{"workflow", nil, workflow, ""},
		{"loopback", nil, "https://127.0.0.1/workflows/x", "url: 127.0.0.1 is a loopback address, refused unless webhook.allowNetworks admits it"},
		{"cloud metadata", nil, "https://169.254.169.254/latest", "the cloud metadata address"},
		{"plain http", nil, "http://flows.example.com/workflows/x", "url: must be https; plain http only to networks in webhook.allowNetworks"},
		{"plain http inside the allowed networks", []string{"127.0.0.0/8"}, "http://127.0.0.1:8080/workflows/x?sig=1", ""},
		{"localhost", nil, "https://localhost/workflows/x", "localhost names this host"},
		{"credentials", nil, "https://a:b@flows.example.com/x", "url: must not hold credentials"},
		{"not a URL", nil, "flows", "url: must be an absolute https URL"},
		{"empty", nil, " ", "url: is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := teams.Descriptor.ParseSecret(settings(tc.allow...), json.RawMessage(`{}`), tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ParseSecret: %v", err)
				}
				if strings.Contains(string(out), "sig") || strings.Contains(string(out), "workflows") {
					t.Fatalf("the kept configuration shows the URL: %s", out)
				}
				return
			}
			var fe *channels.FieldError
			if !errors.As(err, &fe) || fe.Field != "url" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseSecret = %v, want a *FieldError on url saying %q", err, tc.want)
			}
		})
	}
	out, _ := teams.Descriptor.ParseSecret(settings(), json.RawMessage(`{}`), workflow)
	if string(out) != `{"host":"prod-12.westeurope.logic.azure.com:443"}` || teams.Descriptor.Recipient(out) != "prod-12.westeurope.logic.azure.com:443" {
		t.Errorf("kept %s, recipient %q", out, teams.Descriptor.Recipient(out))
	}
}

// TestParse: a configuration echoed back with its host keeps nothing of it,
// and other fields are refused.
func TestParse(t *testing.T) {
	t.Parallel()
	if out, err := teams.Descriptor.Parse(settings(), json.RawMessage(`{"host":"evil.example.com"}`)); err != nil || string(out) != `{"host":""}` {
		t.Errorf("Parse of an echoed host = %s, %v", out, err)
	}
	if _, err := teams.Descriptor.Parse(settings(), json.RawMessage(`{"channel":"x"}`)); err == nil || !strings.Contains(err.Error(), "channel: is not a field of this kind") {
		t.Errorf("Parse of an unknown field = %v", err)
	}
}

// TestLinkReadsTheWebhookSection: linked, the section takes
// webhook.allowNetworks; unlinked, plain http is refused.
func TestLinkReadsTheWebhookSection(t *testing.T) {
	t.Parallel()
	wh := webhook.DefaultSettings()
	wh.AllowNetworks = []string{"10.0.0.0/8"}
	set := teams.DefaultSettings()
	if _, err := teams.Descriptor.ParseSecret(set, nil, "http://10.1.2.3/workflows/x"); err == nil {
		t.Fatal("unlinked settings admit plain http")
	}
	var linked channels.Settings = set
	linked.(channels.Linked).Link(func(key string) channels.Settings {
		if key == "webhook" {
			return wh
		}
		return nil
	})
	if _, err := teams.Descriptor.ParseSecret(set, nil, "http://10.1.2.3/workflows/x"); err != nil {
		t.Fatalf("linked settings refuse an address of webhook.allowNetworks: %v", err)
	}
	var _ egress.Config = set.Egress()
}

// TestDestinationNeverNamesTheSignature: one workflow is one destination,
// named by its host and a digest of its path.
func TestDestinationNeverNamesTheSignature(t *testing.T) {
	t.Parallel()
	s := newSender(t, settings(), channels.Env{})
	d := s.Destination(channels.Channel{Secret: workflow})
	other := s.Destination(channels.Channel{Secret: strings.Replace(workflow, "0a1b2c", "ffffff", 1)})
	if !strings.HasPrefix(d, "prod-12.westeurope.logic.azure.com:443 ") || strings.Contains(d, "S1GNATURE") || strings.Contains(d, "0a1b2c") {
		t.Errorf("Destination = %q", d)
	}
	if d == other || d != s.Destination(channels.Channel{Secret: strings.Replace(workflow, "S1GNATURE", "OTHER", 1)}) {
		t.Errorf("destinations %q and %q: a workflow is its host and path", d, other)
	}
}
