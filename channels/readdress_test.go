package channels_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/feedchat"
	"github.com/heraldhq/herald/channels/slack"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/channels/webhook"
)

// TestReaddress: the kinds that take an address apart from a channel keep
// the channel's account and settings, put the address in place of its own,
// and refuse an address as their Parse refuses it, naming the field; a kind
// whose address is its account takes none.
func TestReaddress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d       channels.Descriptor
		config  string
		address string
		want    string // the configuration; "" for a refusal
	}{
		{email.Descriptor, ``, "ann@example.com", `{"to":"ann@example.com"}`},
		{email.Descriptor, ``, "Ann <ann@example.com>", ""},
		{email.Descriptor, ``, "not an address", ""},
		{sms.Descriptor, `{"username":"AC1","from":"+15005550006","to":"+420601234567"}`, "+420777000111",
			`{"username":"AC1","from":"+15005550006","to":"+420777000111"}`},
		{sms.Descriptor, `{"username":"AC1","from":"+15005550006","to":"+420601234567"}`, "777 000 111", ""},
		{sms.Descriptor, ``, "+420777000111", ""},
		{webhook.Descriptor, `{"url":"https://hooks.example.com/a","template":"{}"}`, "https://hooks.example.com/b",
			`{"url":"https://hooks.example.com/b","template":"{}"}`},
		{webhook.Descriptor, `{"url":"https://hooks.example.com/a"}`, "http://127.0.0.1/b", ""},
		{slack.Descriptor, `{"channel":"C0123ABCD"}`, "C0999ZZZZ", `{"channel":"C0999ZZZZ"}`},
		{slack.Descriptor, `{"channel":"C0123ABCD"}`, "#general", ""},
	} {
		got, err := c.d.Readdress(c.d.Settings(), json.RawMessage(c.config), c.address)
		var fe *channels.FieldError
		switch {
		case c.want == "" && (err == nil || !errors.As(err, &fe)):
			t.Errorf("%s to %q: %s, %v; want a field's refusal", c.d.Kind, c.address, got, err)
		case c.want != "" && (err != nil || string(got) != c.want):
			t.Errorf("%s to %q: %s, %v; want %s", c.d.Kind, c.address, got, err, c.want)
		}
	}
	if feedchat.Descriptor.Readdress != nil {
		t.Errorf("feed chat posts as its account's user: it takes no address")
	}
}
