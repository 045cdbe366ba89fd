package app_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/secret"
)

const smsSecret = "tw-auth-token-Zq81XvB3"
const chatSecret = "chatter-pass+SECTOKEN-9kLm"

func TestChannelLifecycle(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	jane := newBrowser(t, b.URL, "ua")
	_, janeURI := b.NewUser(t, "jane@example.com")
	jane.loginWithToken("jane@example.com", "S3cret-pass")
	base := janeURI + "/channelConfigurations"

	cases := []struct {
		name, body string
		kind       string
		want       map[string]string
	}{
		{"email", `{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"jane@example.com"}},"meta":{"title":"Mail"}}}`,
			"emailConfiguration", map[string]string{"to": "jane@example.com"}},
		{"sms", `{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"AC123","password":"` + smsSecret +
			`","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"Phone"}}}`,
			"smsConfiguration", map[string]string{"username": "AC123", "from": "+15005550006", "to": "+420601234567"}},
		{"feed chat", `{"channelConfiguration":{"configuration":{"feedChatConfiguration":{"username":"jane@corp","password":"` + chatSecret +
			`"}},"meta":{"title":"Chatter"}}}`, "feedChatConfiguration", map[string]string{"username": "jane@corp"}},
	}
	var uris []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := jane.do("POST", base, tc.body)
			wantStatus(t, r, 201)
			rec := r.json(t)["channelConfiguration"].(map[string]any)
			meta := rec["meta"].(map[string]any)
			uri := meta["uri"].(string)
			if !strings.HasPrefix(uri, base+"/") || len(uri) != len(base)+1+24 || meta["category"] != "channelConfiguration" ||
				meta["author"] != janeURI || meta["created"] == "" {
				t.Fatalf("meta = %v", meta)
			}
			conf := rec["configuration"].(map[string]any)[tc.kind].(map[string]any)
			if len(conf) != len(tc.want) {
				t.Fatalf("configuration = %v, want exactly %v", conf, tc.want)
			}
			for k, v := range tc.want {
				if conf[k] != v {
					t.Errorf("%s = %v, want %s", k, conf[k], v)
				}
			}
			got := jane.do("GET", uri, "")
			wantStatus(t, got, 200)
			if got.body != r.body {
				t.Errorf("GET differs from POST:\n%s\n%s", got.body, r.body)
			}
			uris = append(uris, uri)
		})
	}
	list := jane.do("GET", base, "")
	wantStatus(t, list, 200)
	if items := list.json(t)["channelConfigurations"].(map[string]any)["items"].([]any); len(items) != 3 {
		t.Fatalf("%d channels listed", len(items))
	}

	// PUT without the password keeps the stored one; the title changes.
	b.Clock.Advance(60e9)
	r := jane.do("PUT", uris[1], `{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"AC123","from":"+15005550006","to":"+420601234999"}},"meta":{"title":"New phone"}}}`)
	wantStatus(t, r, 200)
	meta := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)
	if meta["title"] != "New phone" || meta["created"] == meta["updated"] {
		t.Errorf("after PUT meta = %v", meta)
	}
	if got := openSecret(t, b, uris[1]); got != smsSecret {
		t.Errorf("password after PUT without one = %q", got)
	}
	// Switching kind needs the new kind's password.
	r = jane.do("PUT", uris[0], `{"channelConfiguration":{"configuration":{"feedChatConfiguration":{"username":"x"}},"meta":{"title":"t"}}}`)
	wantStatus(t, r, 400)
	if p := r.errorBody(t)["parameters"].([]any)[0]; p != "channelConfiguration.configuration.feedChatConfiguration.password" {
		t.Errorf("parameter = %v", p)
	}

	wantStatus(t, jane.do("DELETE", uris[0], ""), 204)
	wantStatus(t, jane.do("GET", uris[0], ""), 404)
	wantStatus(t, jane.do("DELETE", uris[0], ""), 404)

	// Someone else's channels are invisible and untouchable; the domain admin may.
	joe := newBrowser(t, b.URL, "ua")
	b.NewUser(t, "joe@example.com")
	joe.loginWithToken("joe@example.com", "S3cret-pass")
	for _, req := range [][2]string{{"GET", base}, {"GET", uris[1]}, {"DELETE", uris[1]}, {"POST", base}} {
		wantStatus(t, joe.do(req[0], req[1], cases[0].body), 404)
	}
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	wantStatus(t, admin.do("GET", uris[1], ""), 200)
}

// openSecret reads the sealed password of a channel straight from the store.
func openSecret(t *testing.T, b *apptest.Bundle, uri string) string {
	t.Helper()
	id := uri[strings.LastIndexByte(uri, '/')+1:]
	ch, err := b.App.Store().ChannelByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	key, err := secret.LoadOrCreateKey(filepath.Join(b.Config.Data, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	box, _ := secret.New(key)
	p, err := box.Open(ch.Secret, []byte(id))
	if err != nil {
		t.Fatal(err)
	}
	return string(p)
}

// TestChannelPasswordsNeverLeak looks for the passwords in every response,
// the log and every file of the data folder.
func TestChannelPasswordsNeverLeak(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	base := b.AdminProfile + "/channelConfigurations"
	var bodies []string
	for _, body := range []string{
		`{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"AC1","password":"` + smsSecret + `","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"S"}}}`,
		`{"channelConfiguration":{"configuration":{"feedChatConfiguration":{"username":"u","password":"` + chatSecret + `"}},"meta":{"title":"C"}}}`,
		// A bad request carrying a password must not echo it either.
		`{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"AC1","password":"` + smsSecret + `","from":"bad","to":"+420601234567"}},"meta":{"title":"S"}}}`,
	} {
		r := br.do("POST", base, body)
		bodies = append(bodies, r.body)
		if r.status == 201 {
			uri := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
			bodies = append(bodies, br.do("GET", uri, "").body, br.do("GET", uri, "", "Accept", "application/yaml").body)
		}
	}
	bodies = append(bodies, br.do("GET", base, "").body)
	for _, s := range []string{smsSecret, chatSecret} {
		for _, body := range bodies {
			if strings.Contains(body, s) {
				t.Errorf("a response carries a password: %s", body)
			}
		}
		if strings.Contains(b.Log.String(), s) {
			t.Errorf("the log carries a password")
		}
	}
	// Every file in the data folder: database, WAL, key.
	err := filepath.Walk(b.Config.Data, func(path string, fi os.FileInfo, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a temporary file that went away while we walked
		}
		if err != nil || fi.IsDir() {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil // the backup socket: it holds nothing at rest
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, s := range []string{smsSecret, chatSecret} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds a password in clear text", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
