package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The Java SDK's HTTP client and the readers of its services, as gooddata-java and
// gooddata-http-client build and read them (see sdk_helpers_test.go).

// java makes a request through GoodDataHttpClient.execute (GoodDataHttpClient.java:280):
// with the TT it has, and on a 401 that names a token, the challenge handling of
// handleResponse (:90-163): a new TT for a TT challenge, a new login when that fails or
// for an SST challenge, then the request again with the new TT added beside the old one
// (cloneRequestWithNewTT, :165-211). Redirects are followed as HttpClient does.
func (c *sdkClient) java(method, path string, body any) sdkReply {
	c.t.Helper()
	r := c.send(method, path, body)
	if r.status == http.StatusUnauthorized {
		challenge := strings.Join(r.header.Values("WWW-Authenticate"), " ")
		if strings.Contains(challenge, "cookie=SVCAuthSST") || strings.Contains(challenge, "cookie=SVCAuthTT") {
			old := c.tt
			if !(strings.Contains(challenge, "cookie=SVCAuthTT") && c.sst != "" && c.javaRefreshTT()) {
				c.javaObtainSST()
				if !c.javaRefreshTT() {
					c.t.Fatalf("java: Unable to obtain TT after successfully obtained SST")
				}
			}
			fresh := c.tt
			c.tt = old // the clone keeps the old TT header and adds the new one
			if old == "" {
				c.tt = fresh
				r = c.send(method, path, body)
			} else {
				r = c.send(method, path, body, "X-SVC-AuthTT", fresh)
			}
			c.tt = fresh
		}
	}
	for r.status == http.StatusTemporaryRedirect || r.status == http.StatusFound || r.status == http.StatusSeeOther {
		r = c.send("GET", r.header.Get("Location"), nil)
	}
	return r
}

// javaObtainSST is LoginSSTRetrievalStrategy.obtainSst (:77-108): the login with
// verify_level 2 as JsonUtils.createLoginJson builds it, the body declared
// application/json; charset=UTF-8 (ContentType.APPLICATION_JSON), 200 required, and the
// SST read from the X-GDC-AuthSST header (TokenUtils.extractSST).
func (c *sdkClient) javaObtainSST() {
	c.t.Helper()
	body := `{"postUserLogin":{"login":"` + c.javaLogin[0] + `","password":"` + c.javaLogin[1] + `","remember":0,"verify_level":2}}`
	tt := c.tt
	c.tt = ""
	r := c.send("POST", "/svc/account/login", body, "Accept", "", "X-SVC-VERSION", "",
		"Content-Type", "", "Content-Type", "application/json; charset=UTF-8")
	c.tt = tt
	if r.status != http.StatusOK {
		c.t.Fatalf("java: GoodDataAuthException: Unable to login reason='%s' httpStatus=%d", r.body, r.status)
	}
	c.sst = r.header.Get("X-SVC-AuthSST")
	if c.sst == "" && !c.lenient {
		c.t.Fatalf("java: Unable to login. Response doesn't contain header X-SVC-AuthSST")
	}
}

// javaRefreshTT is GoodDataHttpClient.refreshTt (:252-275): GET of the token resource with
// the SST header; 200 gives the TT in the X-GDC-AuthTT header, 401 says log in again.
func (c *sdkClient) javaRefreshTT() bool {
	c.t.Helper()
	c.ttRequests++
	tt := c.tt
	c.tt = ""
	var r sdkReply
	if c.sst == "" && c.lenient {
		r = c.send("GET", "/svc/account/token", nil, "Accept", "", "X-SVC-VERSION", "")
	} else {
		r = c.send("GET", "/svc/account/token", nil, "Accept", "", "X-SVC-VERSION", "", "X-SVC-AuthSST", c.sst)
	}
	c.tt = tt
	switch r.status {
	case http.StatusOK:
		c.tt = r.header.Get("X-SVC-AuthTT")
		if c.tt == "" && !c.lenient {
			c.t.Fatalf("java: Unable to login. Response doesn't contain header X-SVC-AuthTT")
		}
		return true
	case http.StatusUnauthorized:
		return false
	}
	c.t.Fatalf("java: Unable to obtain TT, HTTP status: %d", r.status)
	return false
}

// javaOK fails as Spring's RestTemplate with the SDK's ResponseErrorHandler does on an
// error status, and returns the reply.
func (c *sdkClient) javaOK(r sdkReply, what string) sdkReply {
	c.t.Helper()
	if r.status >= 400 {
		c.t.Fatalf("java: %s: GoodDataRestException %s", what, r)
	}
	return r
}

// javaWrapped reads a body as Jackson reads a class with @JsonTypeInfo WRAPPER_OBJECT: an
// object whose only key is the type name (AsWrapperTypeDeserializer fails on a first key
// of another name, and on any key after the wrapped value). It returns the wrapped value.
func (c *sdkClient) javaWrapped(r sdkReply, name string) map[string]any {
	c.t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		c.t.Fatalf("java: %s is not a JSON object: %s", name, r.body)
	}
	inner, ok := v[name].(map[string]any)
	if len(v) != 1 || !ok {
		c.t.Fatalf("java: Jackson reads %s only as the single key of the body: %s", name, r.body)
	}
	return inner
}

// javaPlain reads a body as Jackson reads a class without a wrapper, unknown fields
// ignored.
func (c *sdkClient) javaPlain(r sdkReply) map[string]any {
	c.t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		c.t.Fatalf("java: not a JSON object: %s", r.body)
	}
	return v
}

// javaPoll is AbstractService.poll with the default isFinished of
// AbstractPollHandlerBase (:60): GET the URI until it answers 200 (202 goes on; a client
// error fails). It returns the finishing answer.
func (c *sdkClient) javaPoll(uri string) sdkReply {
	c.t.Helper()
	var r sdkReply
	waitFor(c.t, func() bool {
		r = c.javaOK(c.java("GET", uri, nil), "poll "+uri)
		return r.status == http.StatusOK
	})
	return r
}

// javaTaskState polls an etltask as ExportImportService's export and import handlers do:
// until its taskState (read alone) is finished; it fails unless it is OK.
func javaTaskState(t *testing.T, c *sdkClient, uri string) {
	t.Helper()
	var state map[string]any
	waitFor(t, func() bool {
		state = c.javaWrapped(c.javaOK(c.java("GET", uri, nil), "poll "+uri), "taskState")
		return state["status"] == "OK" || state["status"] == "ERROR"
	})
	if state["status"] != "OK" {
		t.Fatalf("task %s: %v", uri, state)
	}
}
