package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// The replays below send what the platform's own SDKs build, read as they read, with the
// platform's /gdc/ and GDC names read as Herald's /svc/ and SVC:
//
//   - gooddata-ruby at its head: lib/gooddata/rest/connection.rb (header tokens,
//     verify_level 2) and the models it drives;
//   - gooddata-ruby v0.6.27: the same files at that tag (cookies);
//   - gooddata-java (5.0.1+api3) over gooddata-http-client (2.0.1): GoodDataHttpClient,
//     LoginSSTRetrievalStrategy, and the services (ProjectService, ExportService, ...).
//
// Comments cite the client's file and line. The recorded traffic of the Ruby SDK in its
// spec/integration/vcr_cassettes shows the same headers.

// sdkKind names the client a replay follows.
type sdkKind int

const (
	rubyHead sdkKind = iota // gooddata-ruby at its head
	ruby0627                // gooddata-ruby v0.6.27
	javaSDK                 // gooddata-java with gooddata-http-client
)

func (k sdkKind) String() string {
	return [...]string{"ruby head", "ruby 0.6.27", "java"}[k]
}

// sdkClient holds what one SDK keeps between requests.
type sdkClient struct {
	t    *testing.T
	kind sdkKind
	base string
	hc   *http.Client
	ua   string
	// rubyHead and javaSDK keep the tokens as the headers handed them out.
	sst, tt string
	// ruby0627 keeps the cookies of every answer (RestClient 1.8's response.cookies,
	// merged in connection.rb:594) and sends them all back.
	cookies map[string]string
	// auth is the userLogin of the login (connection.rb:221, :211 at 0.6.27).
	auth map[string]any
	// ttRequests counts the token requests after the login's own.
	ttRequests int
	calls      int
	// javaLogin is the login and password of LoginSSTRetrievalStrategy.
	javaLogin [2]string
	// loginCookies are the cookies the login set.
	loginCookies []*http.Cookie
	// lenient reads any JSON Content-Type and, when a login hands out no header tokens,
	// logs in with the cookies instead: for the tests of one thing, so that they fail on
	// that thing and not on the login or the Content-Type that other tests cover.
	lenient bool
}

func newSDK(t *testing.T, b *apptest.Bundle, kind sdkKind) *sdkClient {
	c := &sdkClient{t: t, kind: kind, base: b.URL, cookies: map[string]string{}}
	c.javaLogin = [2]string{b.Config.AdminLogin, apptest.AdminPassword}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	jar, _ := cookiejar.New(nil)
	c.hc = &http.Client{CheckRedirect: noRedirect}
	switch kind {
	case rubyHead:
		c.ua = "gooddata-gem/2.3.4/x86_64-linux/3.1.4" // GoodData.gem_version_string
	case ruby0627:
		c.ua = "gooddata-gem/0.6.27/x86_64-linux/2.1.5"
	case javaSDK:
		// GoodDataSettings.getDefaultUserAgent; HttpClientBuilder keeps cookies by default
		// (SingleEndpointGoodDataRestProvider.createHttpClientBuilder).
		c.ua = "GoodData-Java-SDK/5.0.1+api3 (Linux; 21) Apache-HttpClient/5.4.1"
		c.hc.Jar = jar
	}
	return c
}

// sdkReply is an answer as the wire has it.
type sdkReply struct {
	status int
	header http.Header
	body   []byte
}

func (r sdkReply) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// send makes one request with the headers the client puts on every request, and extra
// ones; body is sent as JSON unless it is a string.
func (c *sdkClient) send(method, path string, body any, extra ...string) sdkReply {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	u := path
	if !strings.HasPrefix(u, "http") {
		u = c.base + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	c.calls++
	req.Header.Set("User-Agent", c.ua)
	switch c.kind {
	case rubyHead:
		// connection.rb:39 DEFAULT_HEADERS on every request, :589 fresh_request_params
		// (the TT, empty before there is one, and a request id), :373 X-GDC-VERSION.
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, application/zip")
		req.Header.Set("X-SVC-AuthTT", c.tt)
		req.Header.Set("X-SVC-Request", fmt.Sprintf(":session%d:call%d", 1, c.calls))
		req.Header.Set("X-SVC-VERSION", "2")
	case ruby0627:
		// connection.rb:70 DEFAULT_HEADERS, :580 the cookies and a request id.
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, application/zip")
		req.Header.Set("X-SVC-Request", fmt.Sprintf(":session%d:call%d", 1, c.calls))
		var parts []string
		for _, name := range []string{"SVCAuthSST", "SVCAuthTT"} {
			if v, ok := c.cookies[name]; ok {
				parts = append(parts, name+"="+v)
			}
		}
		if len(parts) > 0 {
			req.Header.Set("Cookie", strings.Join(parts, "; "))
		}
	case javaSDK:
		// GoodDataSettings presets Accept and X-GDC-VERSION (GoodDataApiVersion: 3);
		// Spring's Jackson converter names the body application/json; RequestIdInterceptor
		// adds X-GDC-REQUEST; GoodDataHttpClient.execute adds the TT it has.
		req.Header.Set("Accept", "application/json")
		req.Header.Set("X-SVC-VERSION", "3")
		req.Header.Set("X-SVC-REQUEST", fmt.Sprintf("java%d", c.calls))
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.tt != "" {
			req.Header.Add("X-SVC-AuthTT", c.tt)
		}
	}
	// extra headers are added; an empty value removes the header.
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			req.Header.Del(extra[i])
			continue
		}
		req.Header.Add(extra[i], extra[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	r := sdkReply{status: resp.StatusCode, header: resp.Header, body: data}
	if c.kind == ruby0627 {
		for _, ck := range resp.Cookies() {
			c.cookies[ck.Name] = ck.Value
		}
	}
	return r
}

// connectForItem logs the client in as the admin for a test of one thing (see lenient):
// as the client does, but without reading the service root, and on the cookies when
// the login answers no header tokens.
func (c *sdkClient) connectForItem() {
	c.t.Helper()
	c.lenient = true
	switch c.kind {
	case javaSDK:
		return // it logs in at its first request's challenge
	case ruby0627:
		c.rubyLogin()
		c.refreshToken()
		return
	}
	c.rubyLogin()
	if c.sst != "" {
		c.refreshToken()
		return
	}
	// No header tokens: the cookies of the login, and a TT cookie.
	c.hc.Jar, _ = cookiejar.New(nil)
	u, _ := url.Parse(c.base)
	c.hc.Jar.SetCookies(u, c.loginCookies)
	if r := c.send("GET", "/svc/account/token", nil); r.status != 200 {
		c.t.Fatalf("ruby head on cookies: token %s", r)
	}
}

// at walks a decoded JSON value; a missing step gives nil.
func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// clockMinutes is how far a test moves the clock to let a temporary token expire.
const clockMinutes = 10 * time.Minute

// sdkProject creates a project as the admin's browser does, loads the sales model and
// data into it, and returns it with a metric, a report definition and a report.
type sdkProject struct {
	m                 *mdClient
	pid, md           string
	metric, def, rept string
}

func newSDKProject(t *testing.T, b *apptest.Bundle, admin *browser) *sdkProject {
	t.Helper()
	m := newMD(t, b, admin)
	wantStatus(t, m.manage(salesMAQL), 200)
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	p := &sdkProject{m: m, pid: m.pid, md: m.md}
	p.metric = m.create(metricJSON("Amount", "SELECT SUM({fact.sales.amount})"))
	label := m.uris("label.stores.name")["label.stores.name"]
	p.def = m.create(jsonString(map[string]any{"reportDefinition": map[string]any{"meta": map[string]any{"title": "Amount by store"},
		"content": map[string]any{"format": "grid", "grid": map[string]any{
			"rows":    []any{map[string]any{"attribute": map[string]any{"uri": label, "alias": "", "totals": []any{[]any{}}}}},
			"columns": []any{"metricGroup"}, "metrics": []any{map[string]any{"uri": p.metric, "alias": ""}}}, "filters": []any{}}}}))
	p.rept = m.create(jsonString(map[string]any{"report": map[string]any{"meta": map[string]any{"title": "Amount by store"},
		"content": map[string]any{"domains": []any{}, "definitions": []any{p.def}}}}))
	return p
}

// query adds a query string to a path, its parameters in the order given, as RestClient
// writes a params hash.
func query(path string, kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, url.QueryEscape(kv[i])+"="+url.QueryEscape(kv[i+1]))
	}
	return path + "?" + strings.Join(parts, "&")
}
