package api

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/heraldhq/herald/store"
)

// Cookie names of the two-token login.
const (
	CookieSST = "SVCAuthSST"
	CookieTT  = "SVCAuthTT"
)

// Header names of the two tokens for clients that log in with verify_level 2, as the
// platform's Ruby and Java SDKs do: the login hands the tokens out in these headers (and
// the super-secure one in userLogin.token), the token request answers the temporary one
// in its header and in userToken.token, and every other request carries it in HeaderTT.
// They live as long as the cookies, are bound to the login's User-Agent as the cookies
// are, and end with the same logout.
const (
	HeaderSST = "X-SVC-AuthSST"
	HeaderTT  = "X-SVC-AuthTT"
)

// verifyHeaders is the verify_level at which a login hands its tokens out in headers
// rather than cookies.
const verifyHeaders = 2

// maxHeaderTTs bounds how many temporary tokens one request may name. A client that
// renews its token and repeats a request adds the new token beside the old one (the
// platform's Java HTTP client does), so a request may carry two.
const maxHeaderTTs = 4

// newToken returns a random token and the hash under which it is stored.
func newToken() (token string, hash []byte) {
	token = rand.Text() + rand.Text() // 2×26 base32 characters, 260 bits
	return token, hashToken(token)
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// challenge is the 401 that names the cookie a client must renew, with the
// HTML body the spec prescribes.
type challenge struct {
	cookie string
	reason string
}

func (c *challenge) Error() string { return c.reason }

func (s *Server) writeChallenge(w http.ResponseWriter, r *http.Request, c *challenge) {
	w.Header().Set("WWW-Authenticate", "Service cookie="+c.cookie)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>401 Unauthorized</title></head><body><h1>401 Unauthorized</h1><p>" +
		c.reason + "</p><p>Request id: " + requestID(r.Context()) + "</p></body></html>\n"))
}

// authenticate resolves the request's temporary token, from the HeaderTT headers (the
// first valid one) or the cookie. When none is valid the challenge names SVCAuthTT if
// the login is still good (get a new TT), and SVCAuthSST otherwise (log in again). A
// client that carries its tokens in headers sends no super-secure token with ordinary
// requests, so a temporary token that expired on a login still good counts as that.
func (s *Server) authenticate(r *http.Request) (store.Principal, error) {
	headerTTs := headerTokens(r, HeaderTT, maxHeaderTTs)
	tokens := headerTTs
	if ck, err := r.Cookie(CookieTT); err == nil && ck.Value != "" {
		tokens = append(tokens, ck.Value)
	}
	now := s.now()
	for _, tok := range tokens {
		hash := hashToken(tok)
		if p, ok := s.auth.get(hash, now); ok {
			return p, nil
		}
		gen := s.auth.generation()
		p, err := s.store.Authenticate(r.Context(), hash, now)
		if err == nil {
			s.auth.put(hash, p, gen)
			return p, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return store.Principal{}, err
		}
	}
	renew := &challenge{cookie: CookieTT, reason: "The temporary token is missing or has expired; get a new one from /svc/account/token."}
	_, err := s.session(r)
	var ch *challenge
	if err == nil {
		return store.Principal{}, renew
	}
	if !errors.As(err, &ch) {
		return store.Principal{}, err
	}
	for _, tok := range headerTTs {
		live, err := s.store.TempTokenOfLiveSession(r.Context(), hashToken(tok), now)
		if err != nil {
			return store.Principal{}, err
		}
		if live {
			return store.Principal{}, renew
		}
	}
	return store.Principal{}, err
}

// headerTokens returns the non-empty values of the request's header name, at most max.
func headerTokens(r *http.Request, name string, max int) []string {
	var out []string
	for _, v := range r.Header.Values(name) {
		if v = strings.TrimSpace(v); v != "" && len(out) < max {
			out = append(out, v)
		}
	}
	return out
}

// session returns the valid session of the request's super-secure token (the HeaderSST
// header, else the cookie), or an SST challenge.
func (s *Server) session(r *http.Request) (store.Session, error) {
	sst := r.Header.Get(HeaderSST)
	if sst == "" {
		if ck, err := r.Cookie(CookieSST); err == nil {
			sst = ck.Value
		}
	}
	if sst == "" {
		return store.Session{}, &challenge{cookie: CookieSST, reason: "You are not logged in; log in at /svc/account/login."}
	}
	se, err := s.store.SessionByTokenHash(r.Context(), hashToken(sst))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (se.Revoked || !s.now().Before(se.Expires))) {
		return store.Session{}, &challenge{cookie: CookieSST, reason: "Your login has expired or ended; log in again at /svc/account/login."}
	}
	return se, err
}

type loginRequest struct {
	PostUserLogin *struct {
		Login         string      `json:"login"`
		Password      string      `json:"password"`
		Remember      looseString `json:"remember"`
		Captcha       string      `json:"captcha"`       // sent by the platform's JS client; ignored
		VerifyCaptcha string      `json:"verifyCaptcha"` // sent by the platform's JS client; ignored
		VerifyLevel   *int        `json:"verify_level"`  // 2: the tokens in headers; other levels: cookies
	} `json:"postUserLogin"`
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	var req loginRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	in := req.PostUserLogin
	switch {
	case in == nil:
		return badField("postUserLogin", "is required")
	case in.Login == "":
		return badField("postUserLogin.login", "is required")
	case in.Password == "":
		return badField("postUserLogin.password", "is required")
	}
	key := strings.ToLower(strings.TrimSpace(in.Login))
	now := s.now()
	done, wait := s.throttle.admit(key, clientAddress(r, s.trustedProxies), now)
	if done == nil {
		secs := strconv.Itoa(max(int(wait.Round(time.Second)/time.Second), 1))
		e := newError(http.StatusTooManyRequests, classTooMany, "Account",
			"Too many failed logins for %s; try again in %s seconds", in.Login, secs)
		e.header = http.Header{"Retry-After": {secs}}
		return e
	}
	u, err := s.store.UserByLogin(r.Context(), in.Login)
	hash := s.dummyHash
	if err == nil {
		hash = []byte(u.PasswordHash)
	} else if !errors.Is(err, store.ErrNotFound) {
		done(false)
		return err
	}
	ok := bcrypt.CompareHashAndPassword(hash, []byte(in.Password)) == nil && err == nil
	done(ok)
	if !ok {
		return newError(http.StatusUnauthorized, classUnauthorized, "Account", "Bad Login or Password!")
	}
	return s.startSession(w, r, u, in.VerifyLevel != nil && *in.VerifyLevel == verifyHeaders, now)
}

// startSession starts a session of u: its super-secure token is set as the cookie the
// spec prescribes and, when the client asked for headers, also handed out in HeaderSST
// and userLogin.token with a first temporary token in HeaderTT, as the platform did. The
// cookie is set either way, so that a browser that sends verify_level 2 keeps working.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u store.User, headers bool, now time.Time) error {
	token, th := newToken()
	se := store.Session{ID: store.NewID(24), UserID: u.ID, TokenHash: th, UserAgent: r.UserAgent(),
		Created: now, Expires: now.Add(s.sstLife)}
	if err := s.store.CreateSession(r.Context(), se); err != nil {
		return err
	}
	s.setCookie(w, CookieSST, token, se.Expires)
	login := map[string]string{"profile": profileURI(u.ID), "state": "/svc/account/login/" + u.ID}
	if !headers {
		respond(w, r, http.StatusOK, map[string]any{"userLogin": login})
		return nil
	}
	tt, err := s.issueTT(r, se)
	if err != nil {
		return err
	}
	login["token"] = token
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set(HeaderSST, token)
	w.Header().Set(HeaderTT, tt)
	respond(w, r, http.StatusOK, map[string]any{"userLogin": login})
	return nil
}

// token issues a temporary token: as the cookie the spec prescribes, or, when the
// super-secure token came in its header, in the HeaderTT header and userToken.token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) error {
	se, err := s.session(r)
	if err != nil {
		return err
	}
	if r.UserAgent() != se.UserAgent {
		return &challenge{cookie: CookieSST, reason: "The User-Agent differs from the one used to log in; log in again."}
	}
	tt, err := s.issueTT(r, se)
	if err != nil {
		return err
	}
	if r.Header.Get(HeaderSST) != "" {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set(HeaderTT, tt)
		respond(w, r, http.StatusOK, map[string]any{"userToken": map[string]string{"token": tt}})
		return nil
	}
	s.setCookie(w, CookieTT, tt, s.ttExpires(se))
	w.WriteHeader(http.StatusOK)
	return nil
}

// ttExpires is when a temporary token issued now for se expires: after its lifetime,
// and never after the session.
func (s *Server) ttExpires(se store.Session) time.Time {
	expires := s.now().Add(s.ttLife)
	if expires.After(se.Expires) {
		expires = se.Expires
	}
	return expires
}

// issueTT stores a new temporary token of se and returns it.
func (s *Server) issueTT(r *http.Request, se store.Session) (string, error) {
	token, th := newToken()
	if err := s.store.CreateTempToken(r.Context(), th, se.ID, s.ttExpires(se)); err != nil {
		return "", err
	}
	return token, nil
}

// logout ends the caller's own session, or, for a domain admin naming another
// user, every session of that user.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	switch {
	case uid == c.UserID:
		if err := s.store.RevokeSession(r.Context(), c.SessionID); err != nil {
			return err
		}
		s.auth.purge(func(p store.Principal) bool { return p.SessionID == c.SessionID })
	case c.kind == kindDomainAdmin:
		if err := s.store.RevokeUserSessions(r.Context(), uid); err != nil {
			return err
		}
		s.auth.purge(func(p store.Principal) bool { return p.UserID == uid })
	default:
		return notFound("account", "Login %s not found", uid)
	}
	if uid == c.UserID {
		s.setCookie(w, CookieSST, "", time.Time{})
		s.setCookie(w, CookieTT, "", time.Time{})
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) setCookie(w http.ResponseWriter, name, value string, expires time.Time) {
	ck := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode}
	// Max-Age rather than Expires: it is relative, so a client whose clock
	// differs from the server's keeps the cookie exactly as long.
	if value == "" {
		ck.MaxAge = -1
	} else {
		// Rounded, not truncated: the clock has moved on a little since expires was
		// set, and a lifetime of 600 s must not become 599.
		ck.MaxAge = max(1, int(expires.Sub(s.now()).Round(time.Second)/time.Second))
	}
	http.SetCookie(w, ck)
}
