package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/analytics/warehouse"
)

// mdRoutes registers the model, data and metadata routes of /svc/md/{pid}, when the
// server has an analytics service.
func (s *Server) mdRoutes() {
	if s.analytics == nil {
		return
	}
	const md = "/svc/md/{pid}"
	s.route("GET "+md, permProjectView, s.aboutMetadata)
	s.route("POST "+md+"/ldm/manage", permProjectEdit, s.manageModel)
	s.route("GET "+md+"/tasks/{tid}/status", permProjectView, s.taskStatus)
	s.routeTaking(csvBody, "POST "+md+"/datasets/{dataset}/data", permProjectEdit, s.loadData)

	s.route("POST "+md+"/obj", permProjectEdit, s.createObject)
	s.route("POST "+md+"/obj/{$}", permProjectEdit, s.createObject)
	s.route("GET "+md+"/obj/{oid}", permProjectView, s.getObject)
	s.route("PUT "+md+"/obj/{oid}", permProjectEdit, s.putObject)
	s.route("DELETE "+md+"/obj/{oid}", permProjectEdit, s.deleteObject)
	s.route("GET "+md+"/obj/{oid}/elements", permProjectView, s.listElements)

	s.route("GET "+md+"/query/{category}", permProjectView, s.queryObjects)
	s.route("POST "+md+"/identifiers", permProjectView, s.identifiers)
	s.route("GET "+md+"/using2/{oid}", permProjectView, s.using)
	s.route("GET "+md+"/usedby2/{oid}", permProjectView, s.usedBy)
}

// mdError turns the analytics service's errors into API errors.
func mdError(err error) error {
	var (
		syntax   *maql.Error
		stmt     *ldm.StmtError
		row      *warehouse.RowError
		input    *analytics.InputError
		missing  *analytics.NotFoundError
		conflict *analytics.ConflictError
		inUse    *analytics.InUseError
		tooBig   *http.MaxBytesError
	)
	switch {
	case errors.As(err, &syntax):
		if syntax.Token == "" {
			return badRequest("md", "MAQL syntax error at line %s, column %s, at the end of the input: %s",
				strconv.Itoa(syntax.Line), strconv.Itoa(syntax.Col), syntax.Msg)
		}
		return badRequest("md", "MAQL syntax error at line %s, column %s, near %s: %s",
			strconv.Itoa(syntax.Line), strconv.Itoa(syntax.Col), strconv.Quote(syntax.Token), syntax.Msg)
	case errors.As(err, &stmt):
		return badRequest("md", "line %s: %s", strconv.Itoa(stmt.Pos.Line), stmt.Msg)
	case errors.As(err, &row):
		if row.Row == 0 {
			return badRequest("md", "CSV: %s", row.Msg)
		}
		if row.Column == "" {
			return badRequest("md", "CSV row %s: %s", strconv.FormatInt(row.Row, 10), row.Msg)
		}
		return badRequest("md", "CSV row %s, column %s: %s", strconv.FormatInt(row.Row, 10), row.Column, row.Msg)
	case errors.As(err, &input):
		if input.Field != "" {
			return badField(input.Field, input.Msg)
		}
		return badRequest("md", "%s", input.Msg)
	case errors.As(err, &missing):
		switch missing.Kind {
		case "object":
			return notFound("md", "Object ID %s not found", missing.ID)
		case "dataset":
			return notFound("md", "Dataset %s not found", missing.ID)
		case "task":
			return notFound("md", "Task %s not found", missing.ID)
		}
		return notFound("md", "Query %s not found", missing.ID)
	case errors.As(err, &conflict):
		return newError(http.StatusConflict, classConflict, "md", "%s", conflict.Msg)
	case errors.As(err, &inUse):
		users := make([]string, len(inUse.Users))
		for i, u := range inUse.Users {
			users[i] = u.Category + " " + strconv.Quote(u.Title) + " (" + u.URI + ")"
		}
		return newError(http.StatusConflict, classConflict, "md", "Object %s is used by %s", inUse.URI, strings.Join(users, ", "))
	case errors.As(err, &tooBig):
		return newError(http.StatusRequestEntityTooLarge, classUser, "api",
			"Request body is larger than %s bytes", strconv.FormatInt(tooBig.Limit, 10))
	}
	return err
}

// objectID reads the {oid} of the path.
func objectID(r *http.Request) (int64, error) {
	v := r.PathValue("oid")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, notFound("md", "Object ID %s not found", v)
	}
	return id, nil
}

// aboutMetadata lists the project's metadata resources, as the platform's "about"
// resources do; the project's links.metadata points here.
func (s *Server) aboutMetadata(w http.ResponseWriter, r *http.Request, c *caller) error {
	md := "/svc/md/" + c.project.ID
	links := []map[string]string{}
	for _, l := range [][3]string{
		{"obj", "/obj", "Metadata objects"},
		{"query", "/query/reports", "Object listings by category (reports, metrics, ...)"},
		{"identifiers", "/identifiers", "Identifiers to URIs"},
		{"ldm-manage", "/ldm/manage", "Changes to the data model in MAQL"},
		{"validate-project", "/validate", "Project validation"},
		{"project-export", "/maintenance/export", "Export of the project"},
	} {
		links = append(links, map[string]string{"category": l[0], "link": md + l[1], "summary": l[2], "title": l[0]})
	}
	respond(w, r, http.StatusOK, map[string]any{"about": map[string]any{
		"category": "MD", "summary": "Metadata resources", "instance": c.project.ID, "links": links}})
	return nil
}
