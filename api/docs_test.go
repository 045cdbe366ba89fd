package api

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteIsInTheAPIReference: docs/api.md names each route the server
// serves, its method on the row of its path. A parameter may be named
// otherwise there (<id> for {rid}); "GET|PUT|DELETE" names three methods.
func TestEveryRouteIsInTheAPIReference(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(string(doc), "\n")
	routes := newFixture(t).srv.Routes()
	if len(routes) < 50 {
		t.Fatalf("the server names %d routes; is the list right?", len(routes))
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		if !documented(rows, method, path) {
			t.Errorf("docs/api.md has no row for %s", route)
		}
	}
}

var param = regexp.MustCompile(`\{[^}]*\}`)

// documented says whether a row of rows holds path, in the doc's form, and
// method. A path that ends in a slash is the path without it, as the API
// serves it.
func documented(rows []string, method, path string) bool {
	path = strings.TrimSuffix(strings.TrimSuffix(path, "{$}"), "/")
	var re strings.Builder
	for i, part := range param.Split(path, -1) {
		if i > 0 {
			re.WriteString(`<[^>]+>`)
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	pattern := regexp.MustCompile("`[^`]*" + re.String() + "/?[`? ]")
	methods := regexp.MustCompile(`\b` + method + `\b`)
	for _, row := range rows {
		if pattern.MatchString(row) && methods.MatchString(row) {
			return true
		}
	}
	return false
}
