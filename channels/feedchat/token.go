package feedchat

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

// token is an access token and the instance it is valid for.
type token struct {
	access   string
	instance string    // instance_url
	expires  time.Time // zero: until the server refuses it
}

// cached is a token with the credentials it was granted for.
type cached struct {
	secret string // keyed hash of the password
	tok    token
}

// secretKey identifies a password without keeping it: a keyed hash, the key
// being random per Sender.
func (s *Sender) secretKey(password string) string {
	mac := hmac.New(sha256.New, s.salt[:])
	mac.Write([]byte(password))
	return hex.EncodeToString(mac.Sum(nil))
}

// credentials are a channel's user name and its password with the security token.
type credentials struct{ Username, Password string }

// accessToken returns the cached token for ch's credentials, or logs in for
// a new one. A token equal to stale, which the server has just refused, is
// not returned again. Concurrent logins for the same credentials share one
// request.
func (s *Sender) accessToken(ctx context.Context, ch credentials, stale string) (token, error) {
	secret := s.secretKey(ch.Password)
	if tok, ok := s.cachedToken(ch.Username, secret, stale); ok {
		return tok, nil
	}
	v, err, _ := s.logins.Do(ch.Username+"\x00"+secret, func() (any, error) {
		if tok, ok := s.cachedToken(ch.Username, secret, stale); ok {
			return tok, nil // another send logged in meanwhile
		}
		tok, err := s.login(ctx, ch)
		if err != nil {
			return token{}, err
		}
		s.mu.Lock()
		s.tokens[ch.Username] = cached{secret: secret, tok: tok}
		s.mu.Unlock()
		return tok, nil
	})
	if err != nil {
		return token{}, err
	}
	return v.(token), nil
}

// cachedToken returns the cached token of user if it was granted for the
// same password, is not stale and has not expired.
func (s *Sender) cachedToken(user, secret, stale string) (token, bool) {
	s.mu.Lock()
	c, ok := s.tokens[user]
	s.mu.Unlock()
	if !ok || c.secret != secret || c.tok.access == stale {
		return token{}, false
	}
	if !c.tok.expires.IsZero() && !s.now().Before(c.tok.expires) {
		return token{}, false
	}
	return c.tok, true
}

type tokenResponse struct {
	AccessToken string  `json:"access_token"`
	InstanceURL string  `json:"instance_url"`
	TokenType   string  `json:"token_type"`
	ExpiresIn   seconds `json:"expires_in"`
}

type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// OAuth error codes that may pass later, whatever the status says.
var transientOAuthErrors = map[string]bool{
	"rate_limit_exceeded":     true,
	"temporarily_unavailable": true,
	"server_error":            true,
}

// login runs the OAuth 2 password grant for ch's user.
func (s *Sender) login(ctx context.Context, ch credentials) (token, error) {
	form := url.Values{
		"grant_type":    {"password"},
		"client_id":     {s.cfg.ClientID},
		"client_secret": {s.cfg.ClientSecret},
		"username":      {ch.Username},
		"password":      {ch.Password},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		strings.TrimSuffix(s.cfg.LoginURL, "/")+"/services/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		return token{}, channels.Permanent(fmt.Errorf("token request: %w", err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	status, body, err := s.do(req)
	if err != nil {
		return token{}, fmt.Errorf("token request: %w", err)
	}
	if status != http.StatusOK {
		var oe oauthError
		_ = json.Unmarshal(body, &oe)
		if ch.Password != "" { // in case a server echoes the form
			body = bytes.ReplaceAll(body, []byte(ch.Password), []byte("[redacted]"))
		}
		err := fmt.Errorf("token request: status %d: %s", status, describe(oe.Error, oe.Description, body))
		if transientOAuthErrors[oe.Error] || retryableStatus(status) {
			return token{}, err
		}
		return token{}, channels.Permanent(err)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return token{}, fmt.Errorf("token response: %w", err)
	}
	inst, err := url.Parse(tr.InstanceURL)
	if tr.AccessToken == "" || err != nil || (inst.Scheme != "https" && inst.Scheme != "http") || inst.Host == "" {
		return token{}, fmt.Errorf("token response: no access token or instance URL")
	}
	tok := token{access: tr.AccessToken, instance: strings.TrimSuffix(tr.InstanceURL, "/")}
	if tr.ExpiresIn > 0 {
		// Refresh a little early so a token does not lapse in flight.
		d := time.Duration(tr.ExpiresIn) * time.Second
		tok.expires = s.now().Add(d - d/10)
	}
	return tok, nil
}

// seconds is a JSON duration in seconds, sent as a number or a string.
type seconds int64

func (sec *seconds) UnmarshalJSON(b []byte) error {
	str := strings.Trim(string(b), `"`)
	if str == "" || str == "null" {
		*sec = 0
		return nil
	}
	n, err := strconv.ParseInt(str, 10, 64)
	if err != nil {
		return fmt.Errorf("expires_in %s: %w", b, err)
	}
	*sec = seconds(n)
	return nil
}
