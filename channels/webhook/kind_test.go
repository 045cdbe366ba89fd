package webhook_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
)

func settings(allow ...string) *webhook.Settings {
	s := webhook.DefaultSettings()
	s.AllowNetworks = allow
	return s
}

func TestParse(t *testing.T) {
	cases := []struct {
		name   string
		allow  []string
		config string
		want   string // error text, "" for a configuration kept
	}{
		{"https URL kept", nil, `{"url":"https://hooks.example.com/herald?token=abc"}`, ""},
		{"public literal address", nil, `{"url":"https://203.0.113.7:8443/herald"}`, ""},
		{"loopback", nil, `{"url":"https://127.0.0.1/herald"}`, "127.0.0.1 is a loopback address, refused unless webhook.allowNetworks admits it"},
		{"private", nil, `{"url":"https://10.1.2.3/herald"}`, "10.1.2.3 is a private address"},
		{"cloud metadata", nil, `{"url":"http://169.254.169.254/latest/meta-data/"}`, "169.254.169.254 is the cloud metadata address"},
		{"cloud metadata over IPv6", nil, `{"url":"https://[fd00:ec2::254]/"}`, "fd00:ec2::254 is the cloud metadata address"},
		{"link-local", nil, `{"url":"https://169.254.1.1/"}`, "a link-local address"},
		{"link-local IPv6 with a zone", nil, `{"url":"https://[fe80::1%25eth0]/"}`, "a link-local address"},
		{"IPv6 loopback", nil, `{"url":"https://[::1]:8443/herald"}`, "::1 is a loopback address"},
		{"IPv4-mapped loopback", nil, `{"url":"https://[::ffff:127.0.0.1]/herald"}`, "::ffff:127.0.0.1 is a loopback address"},
		{"IPv6 unique local", nil, `{"url":"https://[fd12:3456::1]/"}`, "a private address"},
		{"unspecified", nil, `{"url":"https://0.0.0.0/"}`, "an unspecified address"},
		{"IPv6 unspecified", nil, `{"url":"https://[::]/"}`, "an unspecified address"},
		{"this network", nil, `{"url":"https://0.1.2.3/"}`, "0.0.0.0/8"},
		{"carrier-grade NAT", nil, `{"url":"https://100.64.0.1/"}`, "carrier-grade NAT"},
		{"multicast", nil, `{"url":"https://224.0.0.1/"}`, "a multicast address"},
		{"broadcast", nil, `{"url":"https://255.255.255.255/"}`, "the broadcast address"},
		{"allowed loopback", []string{"127.0.0.0/8"}, `{"url":"https://127.0.0.1:8443/herald"}`, ""},
		{"allowed IPv4-mapped loopback", []string{"127.0.0.0/8"}, `{"url":"https://[::ffff:127.0.0.1]/herald"}`, ""},
		{"allowed private", []string{"10.0.0.0/8"}, `{"url":"https://10.1.2.3/herald"}`, ""},
		{"allowed through a mapped network", []string{"::ffff:10.0.0.0/104"}, `{"url":"https://10.1.2.3/herald"}`, ""},
		{"private outside the allowed network", []string{"10.0.0.0/8"}, `{"url":"https://192.168.1.1/herald"}`, "192.168.1.1 is a private address"},
		{"http without allowed networks", nil, `{"url":"http://hooks.example.com/herald"}`, "url: must be https; plain http only to networks in webhook.allowNetworks"},
		{"http to a name with allowed networks", []string{"10.0.0.0/8"}, `{"url":"http://hooks.internal/herald"}`, ""},
		{"http to an allowed address", []string{"10.0.0.0/8"}, `{"url":"http://10.1.2.3:8080/herald"}`, ""},
		{"http to an address outside the allowed networks", []string{"10.0.0.0/8"}, `{"url":"http://203.0.113.7/herald"}`, "url: must be https; plain http only"},
		{"user info", nil, `{"url":"https://user:pass@hooks.example.com/herald"}`, "must not hold credentials (user:password@): requests are authenticated by their signature"},
		{"user name only", nil, `{"url":"https://user@hooks.example.com/herald"}`, "must not hold credentials"},
		{"unknown field", nil, `{"url":"https://hooks.example.com/","token":"x"}`, "token: is not a field of this kind"},
		{"missing URL", nil, `{}`, "url: is required"},
		{"relative URL", nil, `{"url":"/herald"}`, "must be an absolute https URL"},
		{"not a URL", nil, `{"url":"https://hooks example.com/"}`, "must be an absolute https URL"},
		{"other scheme", nil, `{"url":"ftp://hooks.example.com/"}`, `"ftp:" is not supported`},
		{"no host", nil, `{"url":"https:///herald"}`, "url: must name a host"},
		{"port out of range", nil, `{"url":"https://hooks.example.com:70000/"}`, "port 70000 is not a port number"},
		{"too long", nil, `{"url":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`, "must be at most 2048 characters"},
		{"not a string", nil, `{"url":42}`, "url: must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := webhook.Descriptor.Parse(settings(tc.allow...), json.RawMessage(tc.config))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if string(out) != tc.config {
					t.Fatalf("Parse kept %s, want %s", out, tc.config)
				}
				return
			}
			var fe *channels.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want a *channels.FieldError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %q, want it to say %q", err, tc.want)
			}
			if want := strings.SplitN(tc.want, ":", 2)[0]; want == "token" && fe.Field != "token" || want != "token" && fe.Field != "url" {
				t.Fatalf("error on field %q", fe.Field)
			}
		})
	}
}

func TestParseWithoutSettingsUsesDefaults(t *testing.T) {
	if _, err := webhook.Descriptor.Parse(nil, json.RawMessage(`{"url":"https://127.0.0.1/"}`)); err == nil {
		t.Fatal("Parse without settings admitted a loopback address")
	}
}

func TestSettingsValidate(t *testing.T) {
	if err := webhook.DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	d := webhook.DefaultSettings()
	if d.MaxInlineBytes != 4<<20 || d.Concurrency != 32 || d.PerDestination != 4 || d.PerOwner != 16 || len(d.AllowNetworks) != 0 {
		t.Fatalf("defaults = %+v", d)
	}
	s := webhook.DefaultSettings()
	s.AllowNetworks = []string{"10.0.0.0/8", "x", "fd00::/8", "10.0.0.0"}
	s.MaxInlineBytes = -1
	s.Concurrency = 0
	err := s.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad settings")
	}
	for _, want := range []string{
		`allowNetworks[1]: "x" is not a network in CIDR form, such as 10.0.0.0/8`,
		`allowNetworks[3]: "10.0.0.0" is not a network in CIDR form`,
		"maxInlineBytes: must be 0",
		"concurrency: must be at least 1",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %q, which lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "allowNetworks[0]") || strings.Contains(err.Error(), "allowNetworks[2]") {
		t.Errorf("Validate refused a good network: %v", err)
	}
}

func TestRecipientIsTheHost(t *testing.T) {
	got := webhook.Descriptor.Recipient(json.RawMessage(`{"url":"https://hooks.example.com:8443/herald/T0K3N?sig=abc"}`))
	if got != "hooks.example.com:8443" {
		t.Fatalf("Recipient = %q", got)
	}
}

func TestRegistry(t *testing.T) {
	r, err := channels.NewRegistry(webhook.Descriptor)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	d, ok := r.ByWire("webhookConfiguration")
	if !ok || d.Kind != webhook.Kind || d.Secret != "secret" || d.Section != "webhook" {
		t.Fatalf("ByWire = %+v, %v", d, ok)
	}
	snd, closer, err := d.NewSender(d.Settings(), channels.Env{})
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	if snd.Kind() != webhook.Kind || closer == nil {
		t.Fatalf("NewSender = %v, closer nil: %v", snd, closer == nil)
	}
	if err := closer(); err != nil {
		t.Fatalf("close: %v", err)
	}
	bad := webhook.DefaultSettings()
	bad.AllowNetworks = []string{"nope"}
	if _, _, err := d.NewSender(bad, channels.Env{}); err == nil {
		t.Fatal("NewSender accepted settings that do not validate")
	}
}
