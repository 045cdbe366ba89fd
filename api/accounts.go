package api

import (
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/crypto/bcrypt"

	"github.com/heraldhq/herald/store"
)

type accountSetting struct {
	Login       string         `json:"login"`
	Email       string         `json:"email"`
	FirstName   string         `json:"firstName"`
	LastName    string         `json:"lastName"`
	Timezone    *string        `json:"timezone"`
	Country     *string        `json:"country"`
	PhoneNumber string         `json:"phoneNumber"`
	SSOProvider string         `json:"ssoProvider"`
	Created     string         `json:"created"`
	Updated     string         `json:"updated"`
	Links       map[string]any `json:"links"`
}

func accountOf(u store.User) accountSetting {
	return accountSetting{
		Login: u.Login, Email: u.Login, FirstName: u.FirstName, LastName: u.LastName,
		Timezone: u.Timezone, Country: u.Country, PhoneNumber: u.PhoneNumber, SSOProvider: u.SSOProvider,
		Created: timestamp(u.Created), Updated: timestamp(u.Updated),
		Links: map[string]any{"self": profileURI(u.ID), "projects": profileURI(u.ID) + "/projects"},
	}
}

func (s *Server) currentProfile(w http.ResponseWriter, r *http.Request, c *caller) error {
	http.Redirect(w, r, profileURI(c.UserID), http.StatusTemporaryRedirect)
	return nil
}

func (s *Server) getProfile(w http.ResponseWriter, r *http.Request, c *caller) error {
	u, err := s.userOf(r, r.PathValue("uid"))
	if err != nil {
		return err
	}
	respond(w, r, http.StatusOK, map[string]any{"accountSetting": accountOf(u)})
	return nil
}

// userOf loads a listed (non-service) user or answers 404.
func (s *Server) userOf(r *http.Request, uid string) (store.User, error) {
	u, err := s.store.UserByID(r.Context(), uid)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.IsService) {
		return store.User{}, notFound("account", "User %s not found", uid)
	}
	return u, err
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	if _, err := s.userOf(r, uid); err != nil {
		return err
	}
	err := s.store.DeleteUser(r.Context(), uid)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("account", "User %s not found", uid)
	case errors.Is(err, store.ErrLastAdmin):
		return conflict("account", "User %s is the last admin of the domain and cannot be deleted", uid)
	case err != nil:
		return err
	}
	s.auth.purge(func(p store.Principal) bool { return p.UserID == uid })
	w.WriteHeader(http.StatusOK)
	return nil
}

type createUserRequest struct {
	AccountSetting *struct {
		Login          string  `json:"login"`
		Password       string  `json:"password"`
		VerifyPassword string  `json:"verifyPassword"`
		FirstName      string  `json:"firstName"`
		LastName       string  `json:"lastName"`
		Timezone       *string `json:"timezone"`
		Country        *string `json:"country"`
		PhoneNumber    string  `json:"phoneNumber"`
		SSOProvider    string  `json:"ssoProvider"`
		// Sent by the platform's SDKs. The e-mail address must be the login, which is the
		// address Herald sends to; the language is checked and not kept, as Herald speaks
		// English only.
		Email    *string `json:"email"`
		Language *string `json:"language"`
	} `json:"accountSetting"`
}

// languageTag is a language tag such as en-US, as the platform took for a user's language.
var languageTag = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$`)

// checkEmailLanguage checks the fields the platform's SDKs send beside the spec's.
func checkEmailLanguage(p string, login string, email, language *string) error {
	if email != nil && *email != "" && !strings.EqualFold(*email, login) {
		return badField(p+"email", "must be the login: Herald sends to the login's address")
	}
	if language != nil && *language != "" && !languageTag.MatchString(*language) {
		return badField(p+"language", "must be a language tag such as en-US")
	}
	return nil
}

func (s *Server) createDomainUser(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req createUserRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	a := req.AccountSetting
	if a == nil {
		return badField("accountSetting", "is required")
	}
	const p = "accountSetting."
	if err := checkLogin(p+"login", a.Login); err != nil {
		return err
	}
	if err := checkPassword(p+"password", a.Password, a.Login); err != nil {
		return err
	}
	if a.VerifyPassword != a.Password {
		return badField(p+"verifyPassword", "must equal password")
	}
	if err := checkEmailLanguage(p, a.Login, a.Email, a.Language); err != nil {
		return err
	}
	for _, f := range []struct{ path, value string }{
		{p + "firstName", a.FirstName}, {p + "lastName", a.LastName},
	} {
		if strings.TrimSpace(f.value) == "" {
			return badField(f.path, "is required")
		}
	}
	for _, f := range []struct{ path, value string }{
		{p + "firstName", a.FirstName}, {p + "lastName", a.LastName}, {p + "phoneNumber", a.PhoneNumber},
		{p + "ssoProvider", a.SSOProvider}, {p + "country", deref(a.Country)},
	} {
		if len(f.value) > 255 {
			return badField(f.path, "must be at most 255 characters")
		}
	}
	if a.Timezone != nil && *a.Timezone != "" {
		if _, err := time.LoadLocation(*a.Timezone); err != nil || strings.HasPrefix(*a.Timezone, "/") {
			return badField(p+"timezone", "must be an IANA time zone such as Europe/Prague")
		}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(a.Password), s.pwCost)
	if err != nil {
		return err
	}
	now := s.now()
	u := store.User{
		ID: store.NewID(32), Domain: r.PathValue("domain"), Login: a.Login, PasswordHash: string(hash),
		FirstName: a.FirstName, LastName: a.LastName, Timezone: a.Timezone, Country: a.Country,
		PhoneNumber: a.PhoneNumber, SSOProvider: a.SSOProvider, Created: now, Updated: now,
	}
	if err := s.store.CreateUser(r.Context(), u); errors.Is(err, store.ErrConflict) {
		return conflict("account", "Login %s is already taken", a.Login)
	} else if err != nil {
		return err
	}
	respond(w, r, http.StatusCreated, uriJSON(profileURI(u.ID)))
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkLogin accepts a bare e-mail address.
func checkLogin(path, login string) error {
	if login == "" {
		return badField(path, "is required")
	}
	a, err := mail.ParseAddress(login)
	if err != nil || a.Address != login || a.Name != "" || len(login) > 255 {
		return badField(path, "must be an e-mail address such as jane@example.com")
	}
	return nil
}

// checkPassword asks for at least 8 characters of at least two kinds (letters,
// digits, others) that do not contain the login's name part.
func checkPassword(path, pw, login string) error {
	if pw == "" {
		return badField(path, "is required")
	}
	if len([]rune(pw)) < 8 {
		return badField(path, "must be at least 8 characters long")
	}
	if len(pw) > 72 {
		return badField(path, "must be at most 72 bytes long")
	}
	var letters, digits, others bool
	for _, r := range pw {
		switch {
		case unicode.IsLetter(r):
			letters = true
		case unicode.IsDigit(r):
			digits = true
		default:
			others = true
		}
	}
	if kinds := btoi(letters) + btoi(digits) + btoi(others); kinds < 2 {
		return badField(path, "must mix at least two of letters, digits and other characters")
	}
	name, _, _ := strings.Cut(strings.ToLower(login), "@")
	if len(name) >= 3 && strings.Contains(strings.ToLower(pw), name) {
		return badField(path, "must not contain the login")
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// paging reads offset and limit from the query; present reports whether either was given.
func paging(r *http.Request, defLimit, maxLimit int) (offset, limit int, present bool, err error) {
	q := r.URL.Query()
	offset, limit = 0, defLimit
	if v, ok := q["offset"]; ok {
		present = true
		if offset, err = strconv.Atoi(v[0]); err != nil || offset < 0 {
			return 0, 0, true, badRequest("api", "Query parameter %s must be a whole number of at least 0", "offset")
		}
	}
	if v, ok := q["limit"]; ok {
		present = true
		if limit, err = strconv.Atoi(v[0]); err != nil || limit < 1 {
			return 0, 0, true, badRequest("api", "Query parameter %s must be a whole number of at least 1", "limit")
		}
		limit = min(limit, maxLimit)
	}
	return offset, limit, present, nil
}

type pagingJSON struct {
	Offset     int     `json:"offset"`
	Limit      int     `json:"limit"`
	Count      int     `json:"count"`
	TotalCount int     `json:"totalCount"`
	Next       *string `json:"next"`
}

func pageOf(base string, offset, limit, count, total int, extra string) pagingJSON {
	p := pagingJSON{Offset: offset, Limit: limit, Count: count, TotalCount: total}
	if offset+count < total {
		next := base + "?offset=" + strconv.Itoa(offset+count) + "&limit=" + strconv.Itoa(limit) + extra
		p.Next = &next
	}
	return p
}

func (s *Server) listDomainUsers(w http.ResponseWriter, r *http.Request, c *caller) error {
	offset, limit, _, err := paging(r, 1000, 1000)
	if err != nil {
		return err
	}
	login := r.URL.Query().Get("login")
	users, total, err := s.store.ListDomainUsers(r.Context(), r.PathValue("domain"), login, offset, limit)
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(users))
	for _, u := range users {
		items = append(items, map[string]any{"accountSetting": accountOf(u)})
	}
	extra := ""
	if login != "" {
		extra = "&login=" + url.QueryEscape(login)
	}
	respond(w, r, http.StatusOK, map[string]any{"accountSettings": map[string]any{
		"paging": pageOf(r.URL.Path, offset, limit, len(items), total, extra), "items": items,
	}})
	return nil
}
