package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
)

// Client talks to one Herald service as one user. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
	ua   string

	mu       sync.Mutex // serializes logins and token refreshes
	login    string
	password string
	gen      uint64 // bumped by every successful token refresh or login
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient uses hc (its Jar is replaced by the client's own).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// WithLogin gives the client credentials to log in with when the service
// asks for a login, so no explicit Login call is needed first.
func WithLogin(login, password string) Option {
	return func(c *Client) { c.login, c.password = login, password }
}

// WithUserAgent sets the User-Agent sent on every request. The service
// requires the same one for the login and for token requests.
func WithUserAgent(ua string) Option { return func(c *Client) { c.ua = ua } }

// New returns a client of the service at baseURL (e.g. http://127.0.0.1:8080).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), ua: "herald-client/1"}
	for _, o := range opts {
		o(c)
	}
	hc := &http.Client{}
	if c.hc != nil {
		cp := *c.hc
		hc = &cp
	}
	jar, _ := cookiejar.New(nil) // never fails without options
	hc.Jar = jar
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = hc
	return c
}

// Error is an error answer of the service.
type Error struct {
	Status     int
	ErrorClass string   `json:"errorClass"`
	Component  string   `json:"component"`
	Message    string   `json:"message"`
	Parameters []string `json:"parameters"`
	RequestID  string   `json:"requestId"`
	// Challenge is the cookie a 401 asks for (SVCAuthTT or SVCAuthSST), if any.
	Challenge string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("herald: %d %s", e.Status, http.StatusText(e.Status))
	}
	args := make([]any, len(e.Parameters))
	for i, p := range e.Parameters {
		args[i] = p
	}
	return fmt.Sprintf("herald: %d: %s", e.Status, fmt.Sprintf(e.Message, args...))
}

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// ErrLoggedOut is returned when the login has ended and the client holds no
// credentials to log in again.
var ErrLoggedOut = errors.New("herald: logged out")

// LoginResult is the answer to a login.
type LoginResult struct {
	Profile string `json:"profile"`
	State   string `json:"state"`
}

// Login logs in and remembers the credentials, so the client can log in
// again when the super-secure token expires.
func (c *Client) Login(ctx context.Context, login, password string) (LoginResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res, err := c.loginLocked(ctx, login, password)
	if err != nil {
		return res, err
	}
	c.login, c.password = login, password
	return res, nil
}

func (c *Client) loginLocked(ctx context.Context, login, password string) (LoginResult, error) {
	body := map[string]any{"postUserLogin": map[string]any{"login": login, "password": password, "remember": 0}}
	var out struct {
		UserLogin LoginResult `json:"userLogin"`
	}
	if err := c.send(ctx, http.MethodPost, "/svc/account/login", body, &out); err != nil {
		return LoginResult{}, err
	}
	if err := c.send(ctx, http.MethodGet, "/svc/account/token", nil, nil); err != nil {
		return LoginResult{}, err
	}
	c.gen++
	return out.UserLogin, nil
}

// Logout ends the login on the service and forgets the credentials.
func (c *Client) Logout(ctx context.Context, profileURI string) error {
	uid := profileURI[strings.LastIndexByte(profileURI, '/')+1:]
	err := c.Do(ctx, http.MethodDelete, "/svc/account/login/"+uid, nil, nil)
	c.mu.Lock()
	c.login, c.password = "", ""
	c.mu.Unlock()
	return err
}

// Do sends a request with in as its JSON body (if not nil) and decodes the
// JSON answer into out (if not nil). On a temporary-token challenge it gets a
// new token, once for all concurrent requests, and replays the request once;
// on a super-secure-token challenge it logs in again and replays once.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	err := c.send(ctx, method, path, in, out)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Challenge == "" {
		return err
	}
	if err := c.renew(ctx, gen, e.Challenge); err != nil {
		return err
	}
	return c.send(ctx, method, path, in, out)
}

// renew gets a new temporary token (or logs in again) unless another request
// already did since generation gen.
func (c *Client) renew(ctx context.Context, gen uint64, challenge string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return nil // renewed by a concurrent request meanwhile
	}
	if challenge == "SVCAuthTT" {
		err := c.send(ctx, http.MethodGet, "/svc/account/token", nil, nil)
		if err == nil {
			c.gen++
			return nil
		}
		var e *Error
		if !errors.As(err, &e) || e.Challenge != "SVCAuthSST" {
			return err
		}
	}
	if c.login == "" {
		return ErrLoggedOut
	}
	_, err := c.loginLocked(ctx, c.login, c.password)
	return err
}

// send makes one request without any retry.
func (c *Client) send(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.ua)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		return errorOf(resp, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

func errorOf(resp *http.Response, data []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	var body struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Error != nil {
		e = body.Error
		e.Status = resp.StatusCode
	}
	if resp.StatusCode == http.StatusUnauthorized {
		auth := resp.Header.Get("WWW-Authenticate")
		switch {
		case strings.Contains(auth, "cookie=SVCAuthTT"):
			e.Challenge = "SVCAuthTT"
		case strings.Contains(auth, "cookie=SVCAuthSST"):
			e.Challenge = "SVCAuthSST"
		}
	}
	return e
}

// HTTPClient returns the client's HTTP client: it carries the login cookies,
// for requests the typed methods do not cover (e.g. file downloads). It does
// not renew tokens.
func (c *Client) HTTPClient() *http.Client { return c.hc }
