package slacktest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/heraldhq/herald/channels/slack/slacktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type answer struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	TS        string `json:"ts"`
	Channel   string `json:"channel"`
	UploadURL string `json:"upload_url"`
	FileID    string `json:"file_id"`
}

func call(t *testing.T, method, url, contentType, auth string, body io.Reader) (int, http.Header, answer) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	_ = json.Unmarshal(b, &a)
	return resp.StatusCode, resp.Header, a
}

func form(v url.Values) io.Reader { return strings.NewReader(v.Encode()) }

const formType = "application/x-www-form-urlencoded"

func TestJSONPostWithBearer(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	body := `{"channel":"` + srv.ChannelID() + `","text":"a &amp; b","blocks":[{"type":"divider"}],` +
		`"metadata":{"event_type":"herald_delivery","event_payload":{"delivery_id":"d9"}}}`
	status, _, a := call(t, "POST", srv.URL()+"chat.postMessage", "application/json; charset=utf-8", srv.Token(), strings.NewReader(body))
	if status != 200 || !a.OK || a.Channel != srv.ChannelID() || a.TS == "" {
		t.Fatalf("answer %d %+v", status, a)
	}
	m := srv.Messages()[0]
	if m.Text != "a &amp; b" || string(m.Blocks) != `[{"type":"divider"}]` || m.DeliveryID != "d9" || m.TS != a.TS {
		t.Fatalf("message = %+v", m)
	}
	if d := srv.Deliveries()[0]; d.Key != "d9" || d.Text != "a & b" {
		t.Fatalf("delivery = %+v", d)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	post := url.Values{"channel": {srv.ChannelID()}, "text": {"hi"}}
	for _, tc := range []struct {
		name, bearer, token, want string
	}{
		{"no token", "", "", "not_authed"},
		{"wrong bearer", "xoxb-0-0-wrong", "", "invalid_auth"},
		{"wrong form token", "", "xoxb-0-0-wrong", "invalid_auth"},
		{"form token", "", srv.Token(), ""},
		{"bearer", srv.Token(), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := url.Values{}
			for k, vs := range post {
				v[k] = vs
			}
			if tc.token != "" {
				v.Set("token", tc.token)
			}
			_, _, a := call(t, "POST", srv.URL()+"chat.postMessage", formType, tc.bearer, form(v))
			if a.OK != (tc.want == "") || a.Error != tc.want {
				t.Fatalf("answer %+v, want error %q", a, tc.want)
			}
		})
	}
	_, _, a := call(t, "POST", srv.URL()+"auth.test", formType, srv.Token(), nil)
	if !a.OK {
		t.Fatalf("auth.test: %+v", a)
	}
	status, _, a := call(t, "POST", srv.URL()+"chat.nonsense", formType, srv.Token(), nil)
	if status != http.StatusNotFound || a.Error != "unknown_method" {
		t.Fatalf("unknown method: %d %+v", status, a)
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	for _, tc := range []struct {
		name string
		v    url.Values
		want string
	}{
		{"unknown channel", url.Values{"channel": {"C0NOSUCH00"}, "text": {"hi"}}, "channel_not_found"},
		{"no text", url.Values{"channel": {srv.ChannelID()}}, "no_text"},
		{"too long", url.Values{"channel": {srv.ChannelID()}, "text": {strings.Repeat("x", 40001)}}, "msg_too_long"},
		{"blocks not JSON", url.Values{"channel": {srv.ChannelID()}, "blocks": {"[{"}}, "invalid_blocks_format"},
		{"long header", url.Values{"channel": {srv.ChannelID()}, "blocks": {`[{"type":"header","text":{"type":"plain_text","text":"` + strings.Repeat("h", 151) + `"}}]`}}, "invalid_blocks"},
		{"mrkdwn header", url.Values{"channel": {srv.ChannelID()}, "blocks": {`[{"type":"header","text":{"type":"mrkdwn","text":"h"}}]`}}, "invalid_blocks"},
		{"bad metadata", url.Values{"channel": {srv.ChannelID()}, "text": {"hi"}, "metadata": {`{"event_payload":{}}`}}, "invalid_metadata_format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, a := call(t, "POST", srv.URL()+"chat.postMessage", formType, srv.Token(), form(tc.v))
			if a.OK || a.Error != tc.want {
				t.Fatalf("answer %+v, want %s", a, tc.want)
			}
		})
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages recorded", n)
	}
	_, _, a := call(t, "POST", srv.URL()+"chat.postMessage", formType, srv.Token(), bytes.NewReader(make([]byte, slacktest.MaxBody+1)))
	if a.Error != "request_too_large" {
		t.Fatalf("oversized body: %+v", a)
	}
}

func TestRawUploadAndShare(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	_, _, u := call(t, "POST", srv.URL()+"files.getUploadURLExternal", formType, srv.Token(),
		form(url.Values{"filename": {"r.csv"}, "length": {"4"}}))
	if !u.OK || u.FileID == "" || !strings.HasPrefix(u.UploadURL, strings.TrimSuffix(srv.URL(), "api/")) {
		t.Fatalf("getUploadURLExternal: %+v", u)
	}
	share := url.Values{"files": {`[{"id":"` + u.FileID + `"}]`}, "channel_id": {srv.ChannelID()}, "initial_comment": {"here"}}
	if _, _, a := call(t, "POST", srv.URL()+"files.completeUploadExternal", formType, srv.Token(), form(share)); a.Error != "file_not_found" {
		t.Fatalf("completion before the upload: %+v", a)
	}
	if status, _, _ := call(t, "POST", u.UploadURL, "application/octet-stream", "", strings.NewReader("a,b\n")); status != 200 {
		t.Fatalf("upload: %d", status)
	}
	if _, _, a := call(t, "POST", srv.URL()+"files.completeUploadExternal", formType, srv.Token(), form(share)); !a.OK {
		t.Fatalf("completion: %+v", a)
	}
	m := srv.Messages()
	if len(m) != 1 || m[0].Text != "here" || len(m[0].Files) != 1 || string(m[0].Files[0].Data) != "a,b\n" || m[0].Files[0].Name != "r.csv" {
		t.Fatalf("messages = %+v", m)
	}
	if _, _, a := call(t, "POST", srv.URL()+"files.completeUploadExternal", formType, srv.Token(), form(share)); a.Error != "file_not_found" {
		t.Fatalf("second completion: %+v", a)
	}
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	srv := slacktest.New(t)
	v := url.Values{"channel": {srv.ChannelID()}, "text": {"hi"}}
	srv.FailNext(1, slacktest.RateLimited)
	status, h, a := call(t, "POST", srv.URL()+"chat.postMessage", formType, srv.Token(), form(v))
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" || a.Error != "ratelimited" {
		t.Fatalf("rate limited: %d %v %+v", status, h, a)
	}
	srv.FailNext(1, slacktest.ChannelNotFound)
	if status, _, a := call(t, "POST", srv.URL()+"chat.postMessage", formType, srv.Token(), form(v)); status != 200 || a.Error != "channel_not_found" {
		t.Fatalf("channel not found: %d %+v", status, a)
	}
	if _, _, a := call(t, "POST", srv.URL()+"chat.postMessage", formType, srv.Token(), form(v)); !a.OK {
		t.Fatalf("after the failures: %+v", a)
	}
	if srv.Calls() != 3 || len(srv.Messages()) != 1 {
		t.Fatalf("%d calls, %d messages", srv.Calls(), len(srv.Messages()))
	}
}
