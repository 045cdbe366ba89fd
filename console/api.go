package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// cookie names of the API's two-token session.
const (
	cookieSST = "SVCAuthSST"
	cookieTT  = "SVCAuthTT"
)

// apiError is an answer of the API that is not a success.
type apiError struct {
	Status  int
	Message string // filled in from the error body's template and parameters; for a field, what is wrong with it
	Field   string // the wire path of the field at fault, for a 400 naming one
	Retry   string // Retry-After, for a 429
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// errSignedOut is a session that is gone: the browser must sign in again.
var errSignedOut = errors.New("signed out")

// recorder is a ResponseWriter that keeps the API's answer in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// call is the API as one browser request sees it: each call carries the
// browser's session cookies, User-Agent and address; a temporary token that
// has expired is renewed once, and the new cookie is passed on to the browser.
type call struct {
	api http.Handler
	w   http.ResponseWriter
	r   *http.Request
	tt  string // the temporary token, once renewed
}

// do sends one request. in, when not nil, is sent as JSON; out, when not nil,
// receives a JSON answer. It returns the raw answer too, for files.
func (c *call) do(ctx context.Context, method, path string, in, out any) (*recorder, error) {
	rec, err := c.once(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	if rec.status == http.StatusUnauthorized && strings.Contains(rec.header.Get("WWW-Authenticate"), cookieTT) {
		if err := c.renew(ctx); err != nil {
			return nil, err
		}
		if rec, err = c.once(ctx, method, path, in); err != nil {
			return nil, err
		}
	}
	if rec.status == http.StatusUnauthorized && rec.header.Get("WWW-Authenticate") != "" {
		return nil, errSignedOut // a challenge: the session is gone (a wrong password has none)
	}
	if rec.status >= 400 {
		return rec, decodeError(rec)
	}
	if out != nil && rec.status != http.StatusNoContent {
		if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
			return rec, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return rec, nil
}

func (c *call) once(ctx context.Context, method, path string, in any) (*recorder, error) {
	var body io.Reader = http.NoBody
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = c.r.RemoteAddr
	for _, h := range []string{"User-Agent", "X-Forwarded-For", "X-Request-Id"} {
		if v := c.r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, name := range []string{cookieSST, cookieTT} {
		v := ""
		if ck, err := c.r.Cookie(name); err == nil {
			v = ck.Value
		}
		if name == cookieTT && c.tt != "" {
			v = c.tt
		}
		if v != "" {
			req.AddCookie(&http.Cookie{Name: name, Value: v})
		}
	}
	rec := &recorder{header: http.Header{}}
	c.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec, nil
}

// renew gets a new temporary token with the session cookie and hands it to
// the browser.
func (c *call) renew(ctx context.Context) error {
	rec, err := c.once(ctx, http.MethodGet, "/svc/account/token", nil)
	if err != nil {
		return err
	}
	if rec.status != http.StatusOK {
		return errSignedOut
	}
	c.passCookies(rec)
	for _, ck := range (&http.Response{Header: rec.header}).Cookies() {
		if ck.Name == cookieTT {
			c.tt = ck.Value
		}
	}
	return nil
}

// passCookies hands the API's cookies on to the browser.
func (c *call) passCookies(rec *recorder) {
	for _, v := range rec.header.Values("Set-Cookie") {
		c.w.Header().Add("Set-Cookie", v)
	}
}

// decodeError reads the API's error body.
func decodeError(rec *recorder) error {
	e := &apiError{Status: rec.status, Retry: rec.header.Get("Retry-After")}
	var body struct {
		Error struct {
			Message    string   `json:"message"`
			Parameters []string `json:"parameters"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &body); err != nil || body.Error.Message == "" {
		e.Message = http.StatusText(rec.status)
		return e
	}
	args := make([]any, len(body.Error.Parameters))
	for i, p := range body.Error.Parameters {
		args[i] = p
	}
	e.Message = fmt.Sprintf(body.Error.Message, args...)
	// A bad field's message is "Field %s <what is wrong>" with its path first.
	if rest, ok := strings.CutPrefix(body.Error.Message, "Field %s "); ok && len(args) > 0 {
		e.Field = body.Error.Parameters[0]
		e.Message = fmt.Sprintf(rest, args[1:]...)
	}
	return e
}
