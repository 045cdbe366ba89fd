package api

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// hidden is the 404 of the guard for a caller who may not learn that the
// project, profile or subscriptions exist; a plain 404 in a row is the
// handler's, for a resource the project lacks, past the guard.
const hidden = 4040

// Expected statuses by role (anonymous, tenant, viewer, editor, project admin,
// domain admin) for a route whose handler answers ok to those it admits. They are
// written out here, apart from the policy table, so that a change of the
// policy shows as a changed status.
func everyone(ok int) [numRoles]int          { return [numRoles]int{ok, ok, ok, ok, ok, ok} }
func anyone(ok int) [numRoles]int            { return [numRoles]int{401, ok, ok, ok, ok, ok} }
func self(ok int) [numRoles]int              { return [numRoles]int{401, hidden, hidden, ok, hidden, ok} }
func domainAdmins(ok int) [numRoles]int      { return [numRoles]int{401, 403, 403, 403, 403, ok} }
func members(ok int) [numRoles]int           { return [numRoles]int{401, hidden, ok, ok, ok, ok} }
func editors(ok int) [numRoles]int           { return [numRoles]int{401, hidden, 403, ok, ok, ok} }
func managers(ok int) [numRoles]int          { return [numRoles]int{401, hidden, 403, 403, ok, ok} }
func subscribers(ok int) [numRoles]int       { return [numRoles]int{401, hidden, hidden, ok, ok, ok} }
func subscriptionOwner(ok int) [numRoles]int { return [numRoles]int{401, hidden, hidden, ok, 403, ok} }

// routeRow is how one route answers each role. The request goes to the
// route's pattern with the fixture's project, the editor's profile, channel
// and subscription, the default domain and "1" for every other path value,
// and, for a method with a body, an empty JSON object.
type routeRow struct {
	want        [numRoles]int
	body        string // in place of "{}"
	contentType string // in place of application/json
	// values replace the default path values.
	values map[string]string
	// fresh makes a resource of the row's own for each role (path values
	// that replace the fixture's): for routes that delete or send.
	fresh func(t *testing.T, f *fixture) map[string]string
}

const formType = "application/x-www-form-urlencoded"

const validateBody = `{"validateProject":["LDM"]}`

const (
	subsPath = "/svc/projects/{pid}/users/{uid}/subscriptions"
	chans    = "/svc/account/profile/{uid}/channelConfigurations"
	mdPath   = "/svc/md/{pid}"
)

// adminRole names the project's admin role.
var adminRole = map[string]string{"rid": "2"}

var routeTable = map[string]routeRow{
	"POST /svc/account/login":                  {want: everyone(400)},
	"GET /svc/account/token":                   {want: anyone(200)},
	"GET /unsubscribe/{token}":                 {want: everyone(404)},
	"POST /unsubscribe/{token}":                {want: everyone(404), contentType: formType, body: "a=1"},
	"GET /f/{token}":                           {want: everyone(404)},
	"GET /confirm/{token}":                     {want: everyone(404)},
	"POST /confirm/{token}":                    {want: everyone(404), contentType: formType, body: "a=1"},
	"DELETE /svc/account/login/{uid}":          {want: [numRoles]int{401, 404, 404, 404, 404, 204}, fresh: freshUser},
	"GET /svc/account/profile/current":         {want: anyone(307)},
	"GET /svc/account/profile/{uid}":           {want: self(200)},
	"DELETE /svc/account/profile/{uid}":        {want: [numRoles]int{401, hidden, hidden, hidden, hidden, 200}, fresh: freshUser},
	"GET /svc/account/profile/{uid}/projects":  {want: self(200)},
	"POST /svc/account/domains/{domain}/users": {want: domainAdmins(400)},
	"GET /svc/account/domains/{domain}/users":  {want: domainAdmins(200)},

	"POST /svc/projects":                              {want: anyone(400)},
	"POST /svc/projects/{$}":                          {want: anyone(400)},
	"GET /svc/projects/{pid}":                         {want: members(200)},
	"DELETE /svc/projects/{pid}":                      {want: managers(204), fresh: freshProject},
	"GET /svc/projects/{pid}/users":                   {want: members(200)},
	"POST /svc/projects/{pid}/users":                  {want: managers(400)},
	"GET /svc/projects/{pid}/users/{uid}/roles":       {want: members(200)},
	"GET /svc/projects/{pid}/users/{uid}/permissions": {want: members(200)},
	"GET /svc/projects/{pid}/roles":                   {want: members(200)},
	"GET /svc/projects/{pid}/roles/{rid}":             {want: members(200), values: adminRole},

	"POST " + chans:                         {want: self(400)},
	"GET " + chans:                          {want: self(200)},
	"GET " + chans + "/{cid}":               {want: self(200)},
	"PUT " + chans + "/{cid}":               {want: self(400)},
	"DELETE " + chans + "/{cid}":            {want: self(204), fresh: freshChannel},
	"POST " + chans + "/{cid}/test":         {want: self(503)},
	"POST " + chans + "/{cid}/confirmation": {want: self(409)},

	"POST " + subsPath:                                      {want: subscriptionOwner(400)},
	"GET " + subsPath:                                       {want: subscribers(200)},
	"GET " + subsPath + "/{sid}":                            {want: subscribers(200)},
	"PUT " + subsPath + "/{sid}":                            {want: subscriptionOwner(400)},
	"DELETE " + subsPath + "/{sid}":                         {want: subscribers(204), fresh: freshSubscription},
	"POST " + subsPath + "/{sid}/preview":                   {want: subscribers(503)},
	"GET " + subsPath + "/{sid}/runs":                       {want: subscribers(200)},
	"GET " + subsPath + "/{sid}/recipients":                 {want: subscribers(503)}, // no engine here
	"GET " + subsPath + "/{sid}/runs/{rid}":                 {want: subscribers(404)},
	"GET " + subsPath + "/{sid}/runs/{rid}/attachments/{i}": {want: subscribers(404)},
	"POST " + subsPath + "/{sid}/send":                      {want: subscriptionOwner(500), fresh: freshSubscription},

	"GET /svc":                                  {want: everyone(200)},
	"GET /svc/{$}":                              {want: everyone(200)},
	"GET /svc/projects/{pid}/connectors":        {want: members(200)},
	"GET /svc/projects/{pid}/publicartifacts":   {want: members(200)},
	"GET /svc/projects/{pid}/invitations":       {want: members(200)},
	"GET /svc/md/{pid}/templates":               {want: members(200)},
	"GET /svc/projects/{pid}/users/{uid}":       {want: members(200)},
	"GET /svc/projects/{pid}/roles/{rid}/users": {want: members(200), values: adminRole},
	"GET /svc/internal/projects/{pid}/roles":    {want: members(200)},

	"GET " + mdPath:                               {want: members(200)},
	"GET " + mdPath + "/ldm":                      {want: members(200)},
	"GET " + mdPath + "/query":                    {want: members(200)},
	"GET " + mdPath + "/objects":                  {want: members(200)},
	"GET " + mdPath + "/objects/query":            {want: members(400)},
	"GET /svc/projects/{pid}/ldm":                 {want: members(200)},
	"POST " + mdPath + "/ldm/manage":              {want: editors(400)},
	"POST " + mdPath + "/ldm/manage2":             {want: editors(400)},
	"GET " + mdPath + "/tasks/{tid}/status":       {want: members(404)},
	"POST " + mdPath + "/datasets/{dataset}/data": {want: editors(404), contentType: "text/csv", body: "a\n1\n"},
	"POST " + mdPath + "/obj":                     {want: editors(400)},
	"POST " + mdPath + "/obj/{$}":                 {want: editors(400)},
	"GET " + mdPath + "/obj/{oid}":                {want: members(404)},
	// An editor's object is looked up first, to keep user filters from them
	// (here it does not exist); an admin's body is read first.
	"PUT " + mdPath + "/obj/{oid}":          {want: [numRoles]int{401, hidden, 403, 404, 400, 400}},
	"DELETE " + mdPath + "/obj/{oid}":       {want: editors(404)},
	"GET " + mdPath + "/obj/{oid}/elements": {want: members(404)},
	"GET " + mdPath + "/query/{category}":   {want: members(404)},
	"GET " + mdPath + "/userfilters":        {want: managers(200)},
	"POST " + mdPath + "/userfilters":       {want: managers(400)},
	"POST " + mdPath + "/identifiers":       {want: members(400)},
	"GET " + mdPath + "/using2/{oid}":       {want: members(404)},
	"GET " + mdPath + "/usedby2/{oid}":      {want: members(404)},

	"POST /svc/xtab2/executor3":                {want: anyone(400)},
	"POST /svc/projects/{pid}/execute":         {want: members(400)},
	"POST /svc/app/projects/{pid}/execute":     {want: members(400)},
	"POST /svc/projects/{pid}/execute/raw":     {want: members(400)},
	"POST /svc/app/projects/{pid}/execute/raw": {want: members(400)},
	"GET /svc/md/{pid}/dataResult/{id}":        {want: members(404)},

	"GET " + mdPath + "/maintenance":                  {want: members(200)},
	"GET " + mdPath + "/etltask/{tid}":                {want: members(404)},
	"POST " + mdPath + "/validate":                    {want: editors(201), body: validateBody},
	"POST " + mdPath + "/validate/{$}":                {want: editors(201), body: validateBody},
	"GET " + mdPath + "/validate":                     {want: members(200)},
	"GET " + mdPath + "/validate/{$}":                 {want: members(200)},
	"GET " + mdPath + "/validate/{tid}":               {want: members(404)},
	"POST " + mdPath + "/maintenance/export":          {want: managers(400)},
	"POST " + mdPath + "/maintenance/import":          {want: managers(400)},
	"POST " + mdPath + "/maintenance/partialmdexport": {want: editors(400)},
	"POST " + mdPath + "/maintenance/partialmdimport": {want: editors(400)},

	"POST /svc/exporter/executor":         {want: anyone(400)},
	"GET /svc/exporter/result/{pid}/{id}": {want: members(404)},
}

func freshUser(t *testing.T, f *fixture) map[string]string {
	f.seq++
	return map[string]string{"uid": f.newUser(t, fmt.Sprintf("target%d", f.seq), "default", false)}
}

func freshProject(t *testing.T, f *fixture) map[string]string {
	return map[string]string{"pid": f.newProject(t)}
}

func freshChannel(t *testing.T, f *fixture) map[string]string {
	return map[string]string{"cid": f.newChannel(t)}
}

func freshSubscription(t *testing.T, f *fixture) map[string]string {
	return map[string]string{"sid": f.newSubscription(t)}
}

// TestEveryRouteAnswersEachRole sends a request to every route the server
// registers as each role and checks the status against routeTable; a route
// without a row, or a row without a route, fails.
func TestEveryRouteAnswersEachRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	routes := f.srv.Routes()
	registered := map[string]bool{}
	for _, pattern := range routes {
		registered[pattern] = true
		if _, ok := routeTable[pattern]; !ok {
			t.Errorf("route %q has no row in routeTable: add how it answers each role", pattern)
		}
	}
	for pattern := range routeTable {
		if !registered[pattern] {
			t.Errorf("routeTable has a row for %q, which the server does not register", pattern)
		}
	}
	for _, pattern := range routes {
		row, ok := routeTable[pattern]
		if !ok {
			continue
		}
		for role := range numRoles {
			values := map[string]string{"pid": f.pid, "uid": f.uids[editor], "cid": f.cid, "sid": f.sid, "domain": "default"}
			maps.Copy(values, row.values)
			if row.fresh != nil {
				maps.Copy(values, row.fresh(t, f))
			}
			method, path := requestOf(pattern, values)
			body, ct := row.body, row.contentType
			if method == http.MethodPost || method == http.MethodPut {
				if body == "" {
					body = "{}"
				}
				if ct == "" {
					ct = "application/json"
				}
			}
			status, resp := f.do(t, role, method, path, ct, body)
			if status == http.StatusNotFound && guardHid(errMessage(resp)) {
				status = hidden
			}
			if status != row.want[role] {
				t.Errorf("%s as %s: status %s, want %s: %s", pattern, roleNames[role], statusName(status), statusName(row.want[role]),
					errMessage(resp))
			}
		}
	}
}

// guardHid reports whether msg is the guard's answer to a caller who may not
// learn that the resource exists.
func guardHid(msg string) bool {
	for _, prefix := range []string{"Project ", "User ", "Subscriptions of user "} {
		if strings.HasPrefix(msg, prefix) && strings.HasSuffix(msg, " not found") {
			return true
		}
	}
	return false
}

func statusName(status int) string {
	if status == hidden {
		return "404 (hidden by the guard)"
	}
	return fmt.Sprint(status)
}

// requestOf is the method and path of a request to pattern with values for
// its wildcards ("1" for those values lacks).
func requestOf(pattern string, values map[string]string) (string, string) {
	method, path, _ := strings.Cut(pattern, " ")
	path = strings.ReplaceAll(path, "{$}", "")
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(path[i:], '}') + i
		v, ok := values[path[i+1:j]]
		if !ok {
			v = "1"
		}
		path = path[:i] + v + path[j+1:]
	}
	return method, path
}
