package api

import (
	"net/http"
	"strconv"
	"strings"
)

// The resources of this file are the original platform's that its own SDKs read and the
// spec does not describe (or names only as a project's links). Where Herald has none of a
// thing, the resource is an empty list of it.

// platformRoutes registers the service root, the project's resources that its links name
// beside the ones the spec describes, and the platform's other forms of the member and
// role resources.
func (s *Server) platformRoutes() {
	s.public(jsonBody, "GET /svc", s.serviceRoot)
	s.public(jsonBody, "GET /svc/{$}", s.serviceRoot)

	const project = "/svc/projects/{pid}"
	s.route("GET "+project+"/connectors", permProjectView, emptyList("connectors", "items"))
	s.route("GET "+project+"/publicartifacts", permProjectView, emptyList("publicArtifacts", "items"))
	s.route("GET "+project+"/invitations", permProjectView, emptyList("invitations", ""))
	s.route("GET /svc/md/{pid}/templates", permProjectView, emptyList("templatesInfo", ""))

	s.route("GET "+project+"/users/{uid}", permProjectView, s.getProjectUser)
	s.route("GET "+project+"/roles/{rid}/users", permProjectView, s.roleUsers)
	s.route("GET /svc/internal/projects/{pid}/roles", permProjectView, s.internalRoles)
}

// rootLinks are the entries of the service root: category, link, title and summary.
var rootLinks = [][4]string{
	{"home", "/svc/", "home", "The root of the API."},
	{"token", "/svc/account/token", "token", "Temporary token generator."},
	{"login", "/svc/account/login", "login", "Authentication service."},
	{"account", "/svc/account/profile/current", "account", "The logged-in account."},
	{"projects", "/svc/projects", "projects", "Projects and their members."},
	{"xtab", "/svc/xtab2/executor3", "xtab", "Report execution."},
	{"report-exporter", "/svc/exporter/executor", "exporter", "Report export."},
	{"uploads", "/svc/uploads/", "user-uploads",
		"User data staging area of the platform; Herald serves none and loads data with POST /svc/md/<project>/datasets/<dataset>/data."},
}

// serviceRoot answers GET /svc: the platform's about document, whose links the Ruby SDK
// reads as it connects (it looks up the uploads link).
func (s *Server) serviceRoot(w http.ResponseWriter, r *http.Request) error {
	respond(w, r, http.StatusOK, map[string]any{"about": map[string]any{
		"summary": "Use links to navigate the services.", "category": "API root", "links": aboutLinks("", rootLinks),
	}})
	return nil
}

// aboutLinks turns entries of category, path (after prefix), title and summary into the
// link list of an about document.
func aboutLinks(prefix string, entries [][4]string) []map[string]string {
	links := make([]map[string]string, 0, len(entries))
	for _, e := range entries {
		links = append(links, map[string]string{"category": e[0], "link": prefix + e[1], "title": e[2], "summary": e[3]})
	}
	return links
}

// emptyList answers a list of things Herald has none of, in the platform's shape:
// {root: []}, or {root: {inner: []}} when inner is given.
func emptyList(root, inner string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) error {
		var body any = []any{}
		if inner != "" {
			body = map[string]any{inner: []any{}, "paging": map[string]any{"offset": 0, "count": 0, "total": 0}}
		}
		respond(w, r, http.StatusOK, map[string]any{root: body})
		return nil
	}
}

// apiLevel is the platform's API level that the client names in X-SVC-VERSION, 0 when it
// names none. The platform's Java SDK sends 3 and reads some answers as a single JSON
// wrapper (Jackson's WRAPPER_OBJECT fails on any key beside it): at level 3 and above
// those answers are the wrapper alone. Every other client gets the spec's answer with
// the platform's key beside it.
func apiLevel(r *http.Request) int {
	n, err := strconv.Atoi(strings.TrimSpace(r.Header.Get("X-SVC-VERSION")))
	if err != nil {
		return 0
	}
	return n
}

// wrapperLevel is the API level from which single-wrapper answers are given.
const wrapperLevel = 3
