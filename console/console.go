package console

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/internal/httpguard"
)

// Prefix is where the console is served.
const Prefix = "/console/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options are what the console works with.
type Options struct {
	// API serves /svc/; the console calls it in process.
	API http.Handler
	// Kinds are the channel kinds, for the channel forms.
	Kinds *channels.Registry
	// Key signs the CSRF tokens. Required.
	Key []byte
	// Secure marks the console's cookie Secure (the service is served over TLS).
	Secure bool
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Logger receives the log. Default: discarded.
	Logger *slog.Logger
}

// Console is the web console's HTTP handler.
type Console struct {
	opt   Options
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New returns the console.
func New(opt Options) (*Console, error) {
	opt.Clock = clock.Or(opt.Clock)
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if len(opt.Key) == 0 {
		return nil, errors.New("console: a key for the CSRF tokens is required")
	}
	c := &Console{opt: opt, mux: http.NewServeMux()}
	var err error
	if c.pages, err = parsePages(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET /console/static/", http.StripPrefix("/console/static/", cacheFor(http.FileServerFS(static))))
	c.mux.HandleFunc("GET /console/{$}", c.page(c.home))
	c.mux.HandleFunc("GET /console/login", c.page(c.loginForm))
	c.mux.HandleFunc("POST /console/login", c.form(c.login))
	c.mux.HandleFunc("POST /console/logout", c.form(c.logout))
	c.mux.HandleFunc("GET /console/cron", c.page(c.cronWords))

	const sub = "/console/projects/{pid}/subscriptions/{sid}"
	c.mux.HandleFunc("GET /console/projects", c.page(c.projects))
	c.mux.HandleFunc("GET /console/projects/{pid}", c.page(c.subscriptions))
	c.mux.HandleFunc("GET /console/projects/{pid}/subscriptions/new", c.page(c.newSubscription))
	c.mux.HandleFunc("POST /console/projects/{pid}/subscriptions/new", c.form(c.createSubscription))
	c.mux.HandleFunc("GET "+sub, c.page(c.subscription))
	c.mux.HandleFunc("GET "+sub+"/edit", c.page(c.editSubscription))
	c.mux.HandleFunc("POST "+sub+"/edit", c.form(c.updateSubscription))
	c.mux.HandleFunc("POST "+sub+"/delete", c.form(c.deleteSubscription))
	c.mux.HandleFunc("POST "+sub+"/send", c.form(c.sendSubscription))
	c.mux.HandleFunc("POST "+sub+"/enabled", c.form(c.setEnabled))
	c.mux.HandleFunc("GET "+sub+"/preview", c.page(c.preview))
	c.mux.HandleFunc("GET "+sub+"/preview/attachments/{i}/{format}", c.page(c.previewFile))
	c.mux.HandleFunc("GET "+sub+"/runs/{rid}/attachments/{i}", c.page(c.runFile))
	c.mux.HandleFunc("GET "+sub+"/runs/{rid}", c.page(c.runPage))
	c.mux.HandleFunc("GET "+sub+"/recipients", c.page(c.recipients))

	c.mux.HandleFunc("GET /console/channels", c.page(c.channelList))
	c.mux.HandleFunc("GET /console/channels/new", c.page(c.newChannel))
	c.mux.HandleFunc("POST /console/channels/new", c.form(c.createChannel))
	c.mux.HandleFunc("GET /console/channels/{cid}", c.page(c.editChannel))
	c.mux.HandleFunc("POST /console/channels/{cid}", c.form(c.updateChannel))
	c.mux.HandleFunc("POST /console/channels/{cid}/delete", c.form(c.deleteChannel))
	c.mux.HandleFunc("POST /console/channels/{cid}/test", c.form(c.testChannel))
	c.mux.HandleFunc("POST /console/channels/{cid}/confirmation", c.form(c.resendConfirmation))
	c.mux.HandleFunc("/console/", c.page(c.notFound))
}

// ServeHTTP serves the console with its security headers. A method the
// service does not know is refused before any work.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !httpguard.KnownMethod(r.Method) {
		http.Error(w, "The request's method is not one this service implements.", http.StatusNotImplemented)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

func cacheFor(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// req is one browser request: the API as it sees it, and what the page needs.
type req struct {
	*call
	ctx  context.Context
	user string // the signed-in user's id; "" on the sign-in page
	csrf string
}

// handler serves one request; it renders a page or redirects, or returns an
// error that the console shows.
type handler func(w http.ResponseWriter, q *req) error

// page serves a GET: the user must be signed in, except on the sign-in page.
func (c *Console) page(h handler) http.HandlerFunc {
	return c.serve(h, false)
}

// form serves a POST: it must come from the console's own pages, and its
// CSRF token must be the one of the browser's session (of its sign-in page,
// for the sign-in form).
func (c *Console) form(h handler) http.HandlerFunc {
	return c.serve(h, true)
}

func (c *Console) serve(h handler, post bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := &req{call: &call{api: c.opt.API, w: w, r: r}, ctx: r.Context()}
		signIn := r.URL.Path == "/console/login"
		switch {
		case signIn && !post:
			q.csrf = c.newSignInToken(w)
		case signIn:
			q.csrf = c.signInToken(r)
		default:
			q.csrf = c.sessionToken(r)
		}
		if post {
			if httpguard.OtherOrigin(r) {
				c.fail(w, q, &apiError{Status: http.StatusForbidden,
					Message: "The form was sent from another site; the console takes forms only from its own pages."})
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			if err := r.ParseForm(); err != nil || q.csrf == "" || !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(q.csrf)) {
				c.fail(w, q, &apiError{Status: http.StatusForbidden,
					Message: "The form has expired or did not come from this console; go back, reload the page and try again."})
				return
			}
		}
		open := signIn || strings.HasPrefix(r.URL.Path, "/console/static/")
		if !open {
			uid, err := c.whoami(q)
			if err != nil {
				c.fail(w, q, err)
				return
			}
			q.user = uid
		}
		if err := h(w, q); err != nil {
			c.fail(w, q, err)
		}
	}
}

// whoami is the signed-in user's id.
func (c *Console) whoami(q *req) (string, error) {
	rec, err := q.do(q.ctx, http.MethodGet, "/svc/account/profile/current", nil, nil)
	if err != nil {
		return "", err
	}
	loc := rec.header.Get("Location")
	uid := loc[strings.LastIndexByte(loc, '/')+1:]
	if uid == "" {
		return "", errSignedOut
	}
	return uid, nil
}

// fail shows an error: the sign-in page for a session that is gone, an error page otherwise.
func (c *Console) fail(w http.ResponseWriter, q *req, err error) {
	if errors.Is(err, errSignedOut) {
		next := q.r.URL.RequestURI()
		if q.r.Method != http.MethodGet {
			next = Prefix
		}
		http.Redirect(w, q.r, "/console/login?next="+urlQueryEscape(next), http.StatusSeeOther)
		return
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		c.opt.Logger.Error("console request failed", "path", httpguard.Clip(q.r.URL.Path), "err", err)
		ae = &apiError{Status: http.StatusInternalServerError, Message: "Something went wrong on our side; it is logged."}
	}
	c.render(w, q, ae.Status, "error", map[string]any{"Title": http.StatusText(ae.Status), "Error": ae})
}

// signInCookie names the cookie that the sign-in form's token is bound to.
// Over TLS it has the __Host- prefix, which a browser takes only from this
// very host: a sibling site cannot plant one.
func (c *Console) signInCookie() string {
	if c.opt.Secure {
		return "__Host-herald_signin"
	}
	return "herald_signin"
}

// newSignInToken sets a fresh random cookie for the sign-in page and returns
// the token of its form, bound to that cookie: a token and cookie from before
// (the attacker's own, planted in a victim's browser) do not sign anyone in
// once the page was shown again.
func (c *Console) newSignInToken(w http.ResponseWriter) string {
	seed := rand.Text() + rand.Text()
	http.SetCookie(w, &http.Cookie{Name: c.signInCookie(), Value: seed, Path: "/", HttpOnly: true,
		Secure: c.opt.Secure, SameSite: http.SameSiteStrictMode})
	return c.token("console sign-in", seed)
}

// signInToken is the token the sign-in form must carry: bound to the cookie
// its page set; "" without one, or with more than one: a cookie planted with
// a longer path than the page's own would come first and shadow it.
func (c *Console) signInToken(r *http.Request) string {
	var seeds []string
	for _, ck := range r.CookiesNamed(c.signInCookie()) {
		seeds = append(seeds, ck.Value)
	}
	if len(seeds) != 1 {
		return ""
	}
	return c.token("console sign-in", seeds[0])
}

// endSignIn clears the sign-in page's cookie once it has signed someone in.
func (c *Console) endSignIn(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: c.signInCookie(), Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: c.opt.Secure, SameSite: http.SameSiteStrictMode})
}

// sessionToken is the CSRF token of a signed-in browser: bound to its API
// session (the super-secure token), so it changes at every sign-in, is void
// once the session ends, and is another for another user; "" without a session.
func (c *Console) sessionToken(r *http.Request) string {
	ck, err := r.Cookie(cookieSST)
	if err != nil {
		return ""
	}
	return c.token("console session", ck.Value)
}

// token is an HMAC of seed for purpose under the console's key; "" for no seed.
func (c *Console) token(purpose, seed string) string {
	if seed == "" {
		return ""
	}
	m := hmac.New(sha256.New, c.opt.Key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(seed))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// render writes a page.
func (c *Console) render(w http.ResponseWriter, q *req, status int, name string, data map[string]any) {
	t, ok := c.pages[name]
	if !ok {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	data["CSRF"] = q.csrf
	data["User"] = q.user
	data["Path"] = q.r.URL.Path
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		c.opt.Logger.Error("console page", "page", name, "err", err)
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// redirect answers a form with the page to show next (303, so a reload does not post again).
func redirect(w http.ResponseWriter, q *req, to string) error {
	http.Redirect(w, q.r, to, http.StatusSeeOther)
	return nil
}

func (c *Console) notFound(w http.ResponseWriter, q *req) error {
	return &apiError{Status: http.StatusNotFound, Message: "There is no such page in the console."}
}
