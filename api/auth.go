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

// authenticate resolves the request's temporary token. When it is missing or
// no longer valid the challenge names SVCAuthTT if the super-secure token is
// still good (get a new TT), and SVCAuthSST otherwise (log in again).
func (s *Server) authenticate(r *http.Request) (store.Principal, error) {
	if ck, err := r.Cookie(CookieTT); err == nil && ck.Value != "" {
		hash, now := hashToken(ck.Value), s.now()
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
	if _, err := s.session(r); err != nil {
		return store.Principal{}, err
	}
	return store.Principal{}, &challenge{cookie: CookieTT, reason: "The temporary token is missing or has expired; get a new one from /svc/account/token."}
}

// session returns the valid session of the request's super-secure token, or an SST challenge.
func (s *Server) session(r *http.Request) (store.Session, error) {
	ck, err := r.Cookie(CookieSST)
	if err != nil || ck.Value == "" {
		return store.Session{}, &challenge{cookie: CookieSST, reason: "You are not logged in; log in at /svc/account/login."}
	}
	se, err := s.store.SessionByTokenHash(r.Context(), hashToken(ck.Value))
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
		VerifyLevel   *int        `json:"verify_level"`  // sent by some clients; ignored
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
	token, th := newToken()
	se := store.Session{ID: store.NewID(24), UserID: u.ID, TokenHash: th, UserAgent: r.UserAgent(),
		Created: now, Expires: now.Add(s.sstLife)}
	if err := s.store.CreateSession(r.Context(), se); err != nil {
		return err
	}
	s.setCookie(w, CookieSST, token, se.Expires)
	respond(w, r, http.StatusOK, map[string]any{"userLogin": map[string]string{
		"profile": profileURI(u.ID), "state": "/svc/account/login/" + u.ID,
	}})
	return nil
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) error {
	se, err := s.session(r)
	if err != nil {
		return err
	}
	if r.UserAgent() != se.UserAgent {
		return &challenge{cookie: CookieSST, reason: "The User-Agent differs from the one used to log in; log in again."}
	}
	token, th := newToken()
	expires := s.now().Add(s.ttLife)
	if expires.After(se.Expires) {
		expires = se.Expires
	}
	if err := s.store.CreateTempToken(r.Context(), th, se.ID, expires); err != nil {
		return err
	}
	s.setCookie(w, CookieTT, token, expires)
	w.WriteHeader(http.StatusOK)
	return nil
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
