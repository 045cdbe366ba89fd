package googlechat

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL: whatever a channel's URL holds, checkURL does not panic,
// and a URL it admits goes to Google Chat (or the base URL's host), names a
// space's messages and holds a key and a token.
func FuzzCheckURL(f *testing.F) {
	f.Add("https://chat.googleapis.com/v1/spaces/AAAA/messages?key=k&token=t")
	f.Add("http://127.0.0.1:9/v1/spaces/A/messages?key=k&token=t")
	f.Add("https://chat.googleapis.com@evil.example/v1/spaces/A/messages?key=k&token=t")
	f.Add("https://chat.googleapis.com/v1/spaces/A/messages/../../x?key=k&token=t")
	base, _ := url.Parse("http://127.0.0.1:9")
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := checkURL(base, raw)
		if err != nil {
			return
		}
		host := strings.ToLower(u.Host)
		if host != "chat.googleapis.com" && host != "chat.googleapis.com:443" && host != base.Host {
			t.Fatalf("%q admitted, to %s", raw, host)
		}
		if !spacePath.MatchString(u.Path) || u.Query().Get("key") == "" || u.Query().Get("token") == "" || u.User != nil {
			t.Fatalf("%q admitted", raw)
		}
	})
}
