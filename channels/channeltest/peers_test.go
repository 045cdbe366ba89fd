package channeltest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
)

func sendMail(srv *channeltest.SMTPServer, auth smtp.Auth) error {
	c, err := smtp.Dial(srv.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	if auth != nil {
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	if err := c.Mail("herald@example.com"); err != nil {
		return err
	}
	if err := c.Rcpt("ops@example.com"); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(mixed)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

func TestSMTPServerRecords(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	if err := sendMail(srv, nil); err != nil {
		t.Fatalf("send: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	msgs, err := srv.Await(ctx, 1)
	if err != nil {
		t.Fatalf("Await: %v", err)
	}
	m := msgs[0]
	if m.MailFrom != "herald@example.com" || strings.Join(m.RcptTo, ",") != "ops@example.com" || m.MessageID != "<d1@example.com>" {
		t.Fatalf("recorded %q %q %q", m.MailFrom, m.RcptTo, m.MessageID)
	}
	if d := srv.Deliveries(); len(d) != 1 || d[0].Key != "<d1@example.com>" || d[0].Subject != "Tržby klesly" {
		t.Fatalf("Deliveries = %+v", d)
	}
}

func TestSMTPServerFailNext(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	srv.FailNext(2, 451)
	for i := range 2 {
		var tpErr *textproto.Error
		if err := sendMail(srv, nil); !errors.As(err, &tpErr) || tpErr.Code != 451 {
			t.Fatalf("send %d = %v, want a 451 reply", i, err)
		}
	}
	if err := sendMail(srv, nil); err != nil {
		t.Fatalf("third send: %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages recorded, want 1", n)
	}
}

func TestSMTPServerAuth(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t, channeltest.WithSMTPAuth("u", "p"))
	var tpErr *textproto.Error
	if err := sendMail(srv, smtp.PlainAuth("", "u", "wrong", "127.0.0.1")); !errors.As(err, &tpErr) || tpErr.Code != 535 {
		t.Fatalf("wrong password gave %v, want 535", err)
	}
	if err := sendMail(srv, nil); !errors.As(err, &tpErr) || tpErr.Code != 502 {
		t.Fatalf("no auth gave %v, want 502", err)
	}
	if err := sendMail(srv, smtp.PlainAuth("", "u", "p", "127.0.0.1")); err != nil {
		t.Fatalf("right password: %v", err)
	}
}

func TestSMTPServerAwaitHonoursContext(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewSMTPServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := srv.Await(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Await = %v, want context.Canceled", err)
	}
}

func postForm(t *testing.T, rawURL, user, pass string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rawURL, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatalf("decode: %v", err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		var arr []map[string]any
		if err := json.Unmarshal(raw, &arr); err != nil || len(arr) == 0 {
			t.Fatalf("body %s is neither an object nor a list of them", raw)
		}
		obj = arr[0]
	}
	return resp.StatusCode, obj
}

func TestTwilioServer(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewTwilioServer(t)
	ok := url.Values{"To": {"+420777000111"}, "From": {"+15005550006"}, "Body": {"hi"}}
	path := srv.URL() + "/2010-04-01/Accounts/" + srv.AccountSID() + "/Messages.json"
	cases := []struct {
		name       string
		url        string
		user, pass string
		form       url.Values
		status     int
		code       float64
	}{
		{"no auth", path, "", "", ok, 401, 20003},
		{"wrong token", path, srv.AccountSID(), "x", ok, 401, 20003},
		{"other account in path", srv.URL() + "/2010-04-01/Accounts/ACother/Messages.json", srv.AccountSID(), srv.AuthToken(), ok, 404, 20404},
		{"invalid To", path, srv.AccountSID(), srv.AuthToken(), url.Values{"To": {"777"}, "From": {"+15005550006"}, "Body": {"hi"}}, 400, 21211},
		{"no body", path, srv.AccountSID(), srv.AuthToken(), url.Values{"To": {"+420777000111"}, "From": {"+15005550006"}}, 400, 21602},
		{"accepted", path, srv.AccountSID(), srv.AuthToken(), ok, 201, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postForm(t, tc.url, tc.user, tc.pass, tc.form)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%v)", status, tc.status, body)
			}
			if tc.code != 0 && (body["code"] != tc.code || body["status"] != float64(tc.status) || body["more_info"] == nil) {
				t.Fatalf("error body %v, want code %v", body, tc.code)
			}
			if tc.code == 0 && !strings.HasPrefix(body["sid"].(string), "SM") {
				t.Fatalf("success body %v has no message sid", body)
			}
		})
	}
	if msgs := srv.Messages(); len(msgs) != 1 || msgs[0].To != "+420777000111" || msgs[0].Body != "hi" {
		t.Fatalf("Messages = %+v", msgs)
	}
	if n := srv.Requests(); n != len(cases) {
		t.Fatalf("Requests = %d, want %d", n, len(cases))
	}
}

func TestChatterServer(t *testing.T) {
	t.Parallel()
	srv := channeltest.NewChatterServer(t)
	ch := srv.Channel()
	login := func(password string) (int, map[string]any) {
		return postForm(t, srv.URL()+"/services/oauth2/token", "", "", url.Values{
			"grant_type": {"password"}, "client_id": {srv.ClientID()}, "client_secret": {srv.ClientSecret()},
			"username": {chatterUser(t, ch)}, "password": {password},
		})
	}
	post := func(token string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/services/data/v59.0/chatter/feed-elements",
			strings.NewReader(`{"body":{"messageSegments":[{"type":"Text","text":"hi"}]},"feedElementType":"FeedItem","subjectId":"me"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		return do(t, req)
	}
	if status, body := login("wrong"); status != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("wrong password: %d %v", status, body)
	}
	status, body := login(ch.Secret)
	if status != 200 || body["instance_url"] != srv.URL() || body["token_type"] != "Bearer" {
		t.Fatalf("login: %d %v", status, body)
	}
	token := body["access_token"].(string)
	if status, body := post(token); status != 201 || body["id"] == "" {
		t.Fatalf("post: %d %v", status, body)
	}
	srv.ExpireTokens()
	if status, body := post(token); status != 401 || body["errorCode"] != "INVALID_SESSION_ID" {
		t.Fatalf("post with an expired token: %d %v", status, body)
	}
	if n := srv.TokenRequests(); n != 2 {
		t.Fatalf("TokenRequests = %d, want 2", n)
	}
	if posts := srv.Posts(); len(posts) != 1 || posts[0].Text != "hi" || posts[0].Token != token {
		t.Fatalf("Posts = %+v", posts)
	}
}

func chatterUser(t *testing.T, ch channels.Channel) string {
	t.Helper()
	var a struct{ Username string }
	if err := json.Unmarshal(ch.Config, &a); err != nil {
		t.Fatal(err)
	}
	return a.Username
}

// TestSMTPServerOffersPipeliningUnlessTold: the server offers PIPELINING
// like most relays, and WithoutPipelining leaves it out of the EHLO reply
// and nothing else.
func TestSMTPServerOffersPipeliningUnlessTold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []channeltest.SMTPOption
		want bool
	}{
		{"by default", nil, true},
		{"WithoutPipelining", []channeltest.SMTPOption{channeltest.WithoutPipelining()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := channeltest.NewSMTPServer(t, tc.opts...)
			c, err := smtp.Dial(srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Hello("client"); err != nil {
				t.Fatal(err)
			}
			if got, _ := c.Extension("PIPELINING"); got != tc.want {
				t.Errorf("PIPELINING offered: %v, want %v", got, tc.want)
			}
			if got, _ := c.Extension("8BITMIME"); !got {
				t.Error("8BITMIME not offered")
			}
			if err := sendMail(srv, nil); err != nil {
				t.Fatalf("a mail to the server: %v", err)
			}
		})
	}
}
