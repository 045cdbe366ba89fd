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
	s.route("GET "+md+"/ldm", permProjectView, s.about("ldm", "Data model resources", ldmLinks))
	s.route("GET "+md+"/query", permProjectView, s.about("query", "Object listings by category", queryLinks))
	s.route("GET "+md+"/objects", permProjectView, s.about("objects", "Metadata objects", objectsLinks))
	s.route("GET "+md+"/objects/query", permProjectView, s.queryObjectsPaged)
	s.route("GET /svc/projects/{pid}/ldm", permProjectView, s.projectModel)
	s.route("POST "+md+"/ldm/manage", permProjectEdit, s.manageModel)
	s.route("POST "+md+"/ldm/manage2", permProjectEdit, s.manageModel)
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
	s.userFilterRoutes()
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

// The links of the metadata root and of the resources it links: category, path (after
// /svc/md/<pid>), title and summary. The platform's SDKs find resources by category
// (ldm, then ldm-manage2; maintenance; objects; query; validate-project).
var (
	mdLinks = [][4]string{
		{"obj", "/obj", "obj", "Metadata objects: create with POST, read one at obj/<id>"},
		{"objects", "/objects", "objects", "Metadata objects by category, with their content"},
		{"query", "/query", "query", "Object listings by category (query/reports, query/metrics, ...)"},
		{"identifiers", "/identifiers", "identifiers", "Identifiers to URIs"},
		{"instance-identifiers", "/identifiers", "instance-identifiers", "Identifiers to URIs (the same resource)"},
		{"ldm", "/ldm", "ldm", "The data model and changes to it in MAQL"},
		{"ldm-manage", "/ldm/manage", "ldm-manage", "Changes to the data model in MAQL"},
		{"validate-project", "/validate", "validate-project", "Project validation"},
		{"maintenance", "/maintenance", "maintenance", "Export and import of the project and of objects"},
		{"project-export", "/maintenance/export", "project-export", "Export of the project"},
	}
	ldmLinks = [][4]string{
		{"ldm-manage", "/ldm/manage", "ldm-manage", "Changes to the data model in MAQL"},
		{"ldm-manage2", "/ldm/manage2", "ldm-manage2", "Changes to the data model in MAQL (the same resource)"},
	}
	queryLinks = [][4]string{
		{"reports", "/query/reports", "reports", "Reports"},
		{"reportdefinition", "/query/reportdefinition", "reportdefinition", "Report definitions"},
		{"metrics", "/query/metrics", "metrics", "Metrics"},
		{"attributes", "/query/attributes", "attributes", "Attributes"},
		{"facts", "/query/facts", "facts", "Facts"},
		{"datasets", "/query/datasets", "datasets", "Datasets"},
		{"folders", "/query/folders", "folders", "Folders"},
		{"userfilters", "/query/userfilters", "userfilters", "User filters: data permissions (project admins only)"},
	}
	objectsLinks = [][4]string{
		{"query", "/objects/query", "query", "Objects of a category (?category=report), paged by offset and limit"},
	}
	maintenanceLinks = [][4]string{
		{"export", "/maintenance/export", "export", "Export of the project"},
		{"import", "/maintenance/import", "import", "Import of an exported project into an empty one"},
		{"partialmdexport", "/maintenance/partialmdexport", "partialmdexport", "Export of objects with what they use"},
		{"partialmdimport", "/maintenance/partialmdimport", "partialmdimport", "Import of exported objects"},
	}
)

// aboutMetadata lists the project's metadata resources, as the platform's "about"
// resources do; the project's links.metadata points here.
func (s *Server) aboutMetadata(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.about("MD", "Metadata resources", mdLinks)(w, r, c)
}

// about answers an about document of the project's metadata: links to the resources
// below /svc/md/<pid>.
func (s *Server) about(category, summary string, links [][4]string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *caller) error {
		respond(w, r, http.StatusOK, map[string]any{"about": map[string]any{
			"category": category, "summary": summary, "instance": c.project.ID,
			"links": aboutLinks("/svc/md/"+c.project.ID, links)}})
		return nil
	}
}
