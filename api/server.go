package api

import (
	"cmp"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/bcrypt"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/internal/httpguard"
	"github.com/heraldhq/herald/internal/httpserve"
	"github.com/heraldhq/herald/internal/logging"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// Options configure a Server. Zero values take the documented defaults.
type Options struct {
	// Domain is the default domain; its admins administer every project. Required.
	Domain string
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Logger receives one line per request and every internal error. Default slog.Default().
	Logger *slog.Logger
	// Auth configures the two-token login; zero fields take DefaultAuthConfig's.
	Auth AuthConfig
	// LongTimeout is how long the routes that move big bodies (data loads, export
	// downloads) may read and write, past the server's own read and write timeouts.
	// Default 1h.
	LongTimeout time.Duration
	// TrustedProxies are the peers whose X-Forwarded-For names the client's address.
	// Default none: the peer is the client.
	TrustedProxies []netip.Prefix
	// MaxBodyBytes caps request bodies. Default 1 MiB.
	MaxBodyBytes int64
	// SecureCookies marks cookies Secure (the service is reached over TLS).
	SecureCookies bool
	// Notify holds the rules of channels, subscriptions and runs. Required.
	Notify *notify.Service
	// Analytics serves the model, data and metadata routes of /svc/md. Nil: none.
	Analytics *analytics.Service
	// MaxLoadBytes caps the CSV body of a data load. Default 1 GiB.
	MaxLoadBytes int64
	// Previewer evaluates subscriptions for the preview endpoint. Default: none (503).
	Previewer Previewer
	// Exporter renders report results into files. Default: none (503).
	Exporter Exporter
	// Executor executes reports (xtab2/executor3, dataResult). Nil: no such routes.
	Executor ReportExecutor
	// Maintenance validates, exports and imports projects. Nil: no such routes.
	Maintenance Maintenance
	// Registerer receives the HTTP metrics. Default: none (they are kept nowhere).
	Registerer prometheus.Registerer
	// AccessLog says which requests are logged. Default: every one, at Info.
	AccessLog *logging.AccessLog
}

// Server is the HTTP API.
type Server struct {
	store          *store.Store
	domain         string
	now            func() time.Time
	log            *slog.Logger
	ttLife         time.Duration
	sstLife        time.Duration
	pwCost         int
	maxBody        int64
	secure         bool
	throttle       *loginThrottle
	longTimeout    time.Duration
	trustedProxies []netip.Prefix
	auth           *authCache
	listings       *listingCache
	// dummyHash is compared against when the login is unknown, so a wrong
	// login costs as long as a wrong password.
	dummyHash []byte
	mux       *http.ServeMux
	idPrefix  string
	// patterns are the registered routes, in the order of registration.
	patterns []string

	notify      *notify.Service
	analytics   *analytics.Service
	maxLoad     int64
	previewer   Previewer
	exporter    Exporter
	executor    ReportExecutor
	maintenance Maintenance
	metrics     *httpMetrics
	access      logging.AccessLog
}

// The defaults of the auth and http sections, for the zero fields of Options.
var defaultAuth, defaultHTTP = DefaultAuthConfig(), httpserve.DefaultConfig()

// New returns a Server over st.
func New(st *store.Store, opt Options) *Server {
	s := &Server{
		store:   st,
		domain:  opt.Domain,
		now:     clock.Or(opt.Clock).Now,
		log:     opt.Logger,
		ttLife:  cmp.Or(opt.Auth.TTLifetime, defaultAuth.TTLifetime),
		sstLife: cmp.Or(opt.Auth.SSTLifetime, defaultAuth.SSTLifetime),
		pwCost:  cmp.Or(opt.Auth.PasswordCost, defaultAuth.PasswordCost),
		maxBody: cmp.Or(opt.MaxBodyBytes, defaultHTTP.MaxBodyBytes),
		secure:  opt.SecureCookies,
		mux:     http.NewServeMux(),

		notify:      opt.Notify,
		analytics:   opt.Analytics,
		maxLoad:     cmp.Or(opt.MaxLoadBytes, defaultHTTP.MaxLoadBytes),
		previewer:   opt.Previewer,
		exporter:    opt.Exporter,
		executor:    opt.Executor,
		maintenance: opt.Maintenance,
		metrics:     newHTTPMetrics(opt.Registerer),
		access:      logging.DefaultConfig().AccessLog(),
	}
	if opt.AccessLog != nil {
		s.access = *opt.AccessLog
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.throttle = newLoginThrottle(cmp.Or(opt.Auth.LoginFailuresFree, defaultAuth.LoginFailuresFree),
		cmp.Or(opt.Auth.LoginFailuresCeiling, defaultAuth.LoginFailuresCeiling), cmp.Or(opt.Auth.LoginDelayMax, defaultAuth.LoginDelayMax))
	s.trustedProxies = opt.TrustedProxies
	s.longTimeout = cmp.Or(opt.LongTimeout, defaultHTTP.LongTimeout)
	s.auth = newAuthCache(100_000)
	s.listings = newListingCache(16 << 20)
	s.idPrefix = rand.Text()[:8]
	s.dummyHash, _ = bcrypt.GenerateFromPassword([]byte(rand.Text()), s.pwCost) // fails only for a bad cost
	s.routes()
	return s
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.withRequestID(s.mux).ServeHTTP(w, r)
}

// handlerFunc is an API handler: it writes its response, or returns an error
// that the server writes as the error body (and logs when it is internal).
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *caller) error

// route registers pattern under the permission perm (see authz.go); its body,
// if any, is JSON.
func (s *Server) route(pattern string, perm permission, h handlerFunc) {
	s.routeTaking(jsonBody, pattern, perm, h)
}

// routeTaking registers pattern under the permission perm, taking a body in one
// of types, which is checked before the caller is.
func (s *Server) routeTaking(types mediaTypes, pattern string, perm permission, h handlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.taking(types, s.guard(perm, h)))
}

// public registers a route that needs no temporary token and takes a body in
// one of types.
func (s *Server) public(types mediaTypes, pattern string, h func(w http.ResponseWriter, r *http.Request) error) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, s.taking(types, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})))
}

// taking refuses a body of another media type than types before h runs.
func (s *Server) taking(types mediaTypes, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := types.check(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) routes() {
	s.public(jsonBody, "POST /svc/account/login", s.login)
	s.public(jsonBody, "GET /svc/account/token", s.token)
	// The links of messages (extension): the signed token is the permission.
	s.public(formBody, "GET "+notify.UnsubscribePath+"{token}", s.unsubscribe)
	s.public(formBody, "POST "+notify.UnsubscribePath+"{token}", s.unsubscribe)
	s.public(formBody, "GET "+notify.FilePath+"{token}", s.sharedFile)
	s.public(formBody, "GET "+notify.ConfirmPath+"{token}", s.confirmRecipient)
	s.public(formBody, "POST "+notify.ConfirmPath+"{token}", s.confirmRecipient)

	s.route("DELETE /svc/account/login/{uid}", permAuthenticated, s.logout)
	s.route("GET /svc/account/profile/current", permAuthenticated, s.currentProfile)
	s.route("GET /svc/account/profile/{uid}", permSelf, s.getProfile)
	s.route("DELETE /svc/account/profile/{uid}", permSelf, s.deleteUser)
	s.route("GET /svc/account/profile/{uid}/projects", permSelf, s.listUserProjects)
	s.route("POST /svc/account/domains/{domain}/users", permDomainAdmin, s.createDomainUser)
	s.route("GET /svc/account/domains/{domain}/users", permDomainAdmin, s.listDomainUsers)

	s.route("POST /svc/projects", permAuthenticated, s.createProject)
	s.route("POST /svc/projects/{$}", permAuthenticated, s.createProject)
	s.route("GET /svc/projects/{pid}", permProjectRecord, s.getProject)
	s.route("DELETE /svc/projects/{pid}", permProjectManage, s.deleteProject)
	s.route("GET /svc/projects/{pid}/users", permProjectView, s.listProjectUsers)
	s.route("POST /svc/projects/{pid}/users", permProjectManage, s.updateProjectUsers)
	s.route("GET /svc/projects/{pid}/users/{uid}/roles", permProjectView, s.listUserRoles)
	s.route("GET /svc/projects/{pid}/users/{uid}/permissions", permProjectView, s.listUserPermissions)
	s.route("GET /svc/projects/{pid}/roles", permProjectView, s.listRoles)
	s.route("GET /svc/projects/{pid}/roles/{rid}", permProjectView, s.getRole)

	const channels = "/svc/account/profile/{uid}/channelConfigurations"
	s.route("POST "+channels, permSelf, s.createChannel)
	s.route("GET "+channels, permSelf, s.listChannels)
	s.route("GET "+channels+"/{cid}", permSelf, s.getChannel)
	s.route("PUT "+channels+"/{cid}", permSelf, s.putChannel)
	s.route("DELETE "+channels+"/{cid}", permSelf, s.deleteChannel)
	s.route("POST "+channels+"/{cid}/test", permSelf, s.testChannel)
	s.route("POST "+channels+"/{cid}/confirmation", permSelf, s.resendConfirmation)

	const subs = "/svc/projects/{pid}/users/{uid}/subscriptions"
	s.route("POST "+subs, permSubscriptionWrite, s.createSubscription)
	s.route("GET "+subs, permSubscriber, s.listSubscriptions)
	s.route("GET "+subs+"/{sid}", permSubscriber, s.getSubscription)
	s.route("PUT "+subs+"/{sid}", permSubscriptionWrite, s.putSubscription)
	s.route("DELETE "+subs+"/{sid}", permSubscriber, s.deleteSubscription)
	s.route("POST "+subs+"/{sid}/preview", permSubscriber, s.previewSubscription)
	s.route("GET "+subs+"/{sid}/recipients", permSubscriber, s.listRecipients)
	s.route("GET "+subs+"/{sid}/runs", permSubscriber, s.listRuns)
	s.route("GET "+subs+"/{sid}/runs/{rid}", permSubscriber, s.getRun)
	s.route("GET "+subs+"/{sid}/runs/{rid}/attachments/{i}", permSubscriber, s.runFile)
	s.route("POST "+subs+"/{sid}/send", permSubscriptionWrite, s.sendSubscription)

	s.platformRoutes()
	s.mdRoutes()
	s.xtabRoutes()
	s.maintenanceRoutes()

	s.route("POST /svc/exporter/executor", permAuthenticated, s.startExport)
	s.route("GET /svc/exporter/result/{pid}/{id}", permProjectView, s.getExport)

	s.mux.HandleFunc("/", s.unmatched)
}

// Routes are the patterns of the routes the server serves, in the order they were
// registered, as http.ServeMux spells them ("GET /svc/projects/{pid}").
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }

// longDeadlines gives a route that moves a big body the long read and write deadlines
// in place of the server's short ones.
func (s *Server) longDeadlines(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	at := time.Now().Add(s.longTimeout)
	_ = rc.SetReadDeadline(at) // not every writer has deadlines (httptest's); the server's do
	_ = rc.SetWriteDeadline(at)
}

// probeMethods are the methods unmatched tries on a path that matched no route.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch}

// unmatched answers a request no route took: the route of the same path without its
// trailing slash when there is one for the method (the platform's clients build paths
// such as query/reports/ and projects/<pid>/), else 405 with Allow when the path has
// routes for other methods, else 404. The catch-all route hides the mux's own 405, so
// the methods are probed here.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	if trimmed, ok := strings.CutSuffix(r.URL.Path, "/"); ok && trimmed != "" {
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = trimmed, strings.TrimSuffix(r.URL.RawPath, "/")
		if _, pattern := s.mux.Handler(r2); pattern != "/" && pattern != "" {
			s.mux.ServeHTTP(w, r2)
			return
		}
	}
	var allow []string
	for _, m := range probeMethods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		s.writeError(w, r, notFound("api", "No resource at %s", r.URL.Path))
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	s.writeError(w, r, newError(http.StatusMethodNotAllowed, classUser, "api", "Method %s is not allowed at %s; use %s",
		r.Method, r.URL.Path, strings.Join(allow, ", ")))
}

// writeError writes err as the error body; internal errors are logged here, once.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ch *challenge
	if errors.As(err, &ch) {
		s.writeChallenge(w, r, ch)
		return
	}
	e := asError(err)
	if e.Status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", "method", httpguard.MethodLabel(r.Method), "path", httpguard.Clip(r.URL.Path),
			"requestId", httpguard.Clip(requestID(r.Context())), "err", err)
	}
	for k, v := range e.header {
		w.Header()[k] = v
	}
	respond(w, r, e.Status, errorBody{Error: errorContent{
		ErrorClass: e.Class, Component: e.Component, Message: e.Message,
		Parameters: e.Params, RequestID: requestID(r.Context()),
	}})
}

// timestamp formats t as the records' "YYYY-MM-DD HH:MM:SS" (UTC).
func timestamp(t time.Time) string { return t.UTC().Format(time.DateTime) }

func profileURI(uid string) string { return wire.ProfileURI(uid) }
func projectURI(pid string) string { return wire.ProjectURI(pid) }

func uriJSON(uri string) map[string]string { return map[string]string{"uri": uri} }
