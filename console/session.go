package console

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
)

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// consoleHome is where sign-in leads when no clean next page is given.
const consoleHome = "/console/projects"

// safeNext keeps a redirect after sign-in to a clean path of the console: of
// printable ASCII (no TAB, NUL or line break, which browsers drop or stop at,
// no space), with no "//" or "\\" anywhere (which browsers read as another host),
// no scheme or host, no dot segments and no fragment; anything else leads home.
func safeNext(next string) string {
	if len(next) > 2048 || !strings.HasPrefix(next, Prefix) || strings.Contains(next, "//") || strings.Contains(next, "\\") {
		return consoleHome
	}
	for i := range len(next) {
		if next[i] <= ' ' || next[i] >= 0x7f {
			return consoleHome
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" ||
		!strings.HasPrefix(u.Path, Prefix) || !clean(u.Path) {
		return consoleHome
	}
	return next
}

// clean reports whether p, a decoded path, has no dot segments, no empty
// segments and no control characters.
func clean(p string) bool {
	for i := range len(p) {
		if p[i] < ' ' || p[i] == 0x7f || p[i] == '\\' {
			return false
		}
	}
	return !strings.Contains(p, "//") && path.Clean(p) == strings.TrimSuffix(p, "/")
}

func (c *Console) loginForm(w http.ResponseWriter, q *req) error {
	c.render(w, q, http.StatusOK, "login", map[string]any{"Title": "Sign in", "Next": safeNext(q.r.URL.Query().Get("next"))})
	return nil
}

// login signs in through the API's login, which sets the session cookie; the
// console gets the first temporary token on the next page.
func (c *Console) login(w http.ResponseWriter, q *req) error {
	login, next := strings.TrimSpace(q.r.PostFormValue("login")), safeNext(q.r.PostFormValue("next"))
	body := map[string]any{"postUserLogin": map[string]any{"login": login, "password": q.r.PostFormValue("password"), "remember": 0}}
	rec, err := q.do(q.ctx, http.MethodPost, "/svc/account/login", body, nil)
	var ae *apiError
	if errors.As(err, &ae) {
		msg := ae.Message
		if ae.Field != "" {
			msg = "Enter your " + strings.TrimPrefix(ae.Field, "postUserLogin.") + "."
		}
		c.render(w, q, ae.Status, "login", map[string]any{"Title": "Sign in", "Next": next, "Login": login, "Error": msg})
		return nil
	}
	if err != nil {
		return err
	}
	q.passCookies(rec)
	c.endSignIn(w)
	return redirect(w, q, next)
}

// logout ends the session through the API, which clears its cookies.
func (c *Console) logout(w http.ResponseWriter, q *req) error {
	rec, err := q.do(q.ctx, http.MethodDelete, "/svc/account/login/"+q.user, nil, nil)
	if err != nil && !errors.Is(err, errSignedOut) {
		return err
	}
	if rec != nil {
		q.passCookies(rec)
	}
	return redirect(w, q, "/console/login")
}

func (c *Console) home(w http.ResponseWriter, q *req) error {
	return redirect(w, q, "/console/projects")
}
