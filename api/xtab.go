package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// ReportExecutor executes reports and serves their data results.
type ReportExecutor interface {
	Execute(ctx context.Context, pid, author string, src xtab.Source) (xtab.Result, error)
	DataResult(ctx context.Context, pid, id string, pg xtab.Page) (string, *xtab.XTab, error)
	Object(ctx context.Context, pid, id string) (xtab.Result, error)
	// Visible refuses, with xtab.ErrNoResult, a result of another slice of
	// the data than the one user's mandatory user filters leave.
	Visible(ctx context.Context, pid, user, id string) error
}

// xtabRoutes registers report execution, when the server has an executor.
func (s *Server) xtabRoutes() {
	if s.executor == nil {
		return
	}
	s.route("POST /svc/xtab2/executor3", permAuthenticated, s.executeReport)
	s.route("POST /svc/projects/{pid}/execute", permProjectView, s.executeInProject)
	s.route("POST /svc/app/projects/{pid}/execute", permProjectView, s.executeInProject)
	s.route("POST /svc/projects/{pid}/execute/raw", permProjectView, s.exportRaw)
	s.route("POST /svc/app/projects/{pid}/execute/raw", permProjectView, s.exportRaw)
	s.route("GET /svc/md/{pid}/dataResult/{id}", permProjectView, s.dataResult)
}

type executeRequest struct {
	ReportReq *struct {
		ReportDefinition  *string `json:"reportDefinition"`
		Report            *string `json:"report"`
		DefinitionContent *struct {
			Content         json.RawMessage `json:"content"`
			ProjectMetadata string          `json:"projectMetadata"`
		} `json:"definitionContent"`
	} `json:"report_req"`
}

var projectMetadataForm = regexp.MustCompile(`^/svc/md/([a-z0-9]+)/?$`)

// source reads what an execution asks for and the project it is in.
func (req *executeRequest) source() (string, xtab.Source, error) {
	in := req.ReportReq
	if in == nil {
		return "", xtab.Source{}, badField("report_req", "is required")
	}
	if countSet(in.ReportDefinition != nil, in.Report != nil, in.DefinitionContent != nil) != 1 {
		return "", xtab.Source{}, badField("report_req", "must hold exactly one of reportDefinition, report, definitionContent")
	}
	switch {
	case in.ReportDefinition != nil:
		pid, _, ok := wire.ParseObjURI(*in.ReportDefinition)
		if !ok {
			return "", xtab.Source{}, badField(xtab.FieldDefinition, "must be a report definition URI, /svc/md/<project>/obj/<id>")
		}
		return pid, xtab.Source{Definition: *in.ReportDefinition}, nil
	case in.Report != nil:
		pid, _, ok := wire.ParseObjURI(*in.Report)
		if !ok {
			return "", xtab.Source{}, badField(xtab.FieldReport, "must be a report URI, /svc/md/<project>/obj/<id>")
		}
		return pid, xtab.Source{Report: *in.Report}, nil
	}
	dc := in.DefinitionContent
	m := projectMetadataForm.FindStringSubmatch(dc.ProjectMetadata)
	if m == nil {
		return "", xtab.Source{}, badField("report_req.definitionContent.projectMetadata", "must be the project's metadata URI, /svc/md/<project>")
	}
	content, field, err := definitionContent(dc.Content)
	if err != nil {
		return "", xtab.Source{}, err
	}
	return m[1], xtab.Source{Content: content, ContentField: field}, nil
}

// definitionContent decodes an inline report definition in either form clients send:
// bare, {"grid":...,"format":...}, or wrapped as the platform's SDKs send it,
// {"reportDefinition":{"content":{...},"meta":{...}}}. It returns the content and the
// request field it sits at.
func definitionContent(raw json.RawMessage) (*analytics.ReportDefinitionContent, string, error) {
	field := xtab.FieldContent
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", badField(field, "is required")
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) == nil && probe["reportDefinition"] != nil && len(probe) == 1 {
		var wrapped struct {
			ReportDefinition *struct {
				Content json.RawMessage `json:"content"`
				Meta    *objectMetaIn   `json:"meta"` // as the SDKs record a definition: title, summary, tags, ...
			} `json:"reportDefinition"`
		}
		if err := decodeJSONAt(raw, &wrapped, field); err != nil {
			return nil, "", err
		}
		field += ".reportDefinition.content"
		raw = wrapped.ReportDefinition.Content
		if len(raw) == 0 || string(raw) == "null" {
			return nil, "", badField(field, "is required")
		}
	}
	var c analytics.ReportDefinitionContent
	if err := decodeJSONAt(raw, &c, field); err != nil {
		return nil, "", err
	}
	return &c, field, nil
}

type reportResultJSON struct {
	ReportResult2 reportResultBody `json:"reportResult2"`
	// ExecResult is the platform's later answer to an execution, which its Ruby SDK reads
	// (execResult.dataResult): beside the spec's reportResult2 in the answer of an
	// execution, and so in the result object that reads back as that answer.
	ExecResult execResultBody `json:"execResult"`
}

type execResultBody struct {
	ReportView xtab.View `json:"reportView"`
	DataResult string    `json:"dataResult"`
}

type reportResultBody struct {
	Content reportResultContent `json:"content"`
	Meta    objectMetaJSON      `json:"meta"`
}

type reportResultContent struct {
	DataResult       string    `json:"dataResult"`
	ReportDefinition string    `json:"reportDefinition,omitempty"`
	ReportView       xtab.View `json:"reportView"`
}

// executeReport serves POST /svc/xtab2/executor3: 201 with the result, whose data is
// computed off the request path.
func (s *Server) executeReport(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req executeRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	pid, src, err := req.source()
	if err != nil {
		return err
	}
	if err := s.authorizeProject(r, c, pid, permProjectView, executeNeeds(src)); err != nil {
		return err
	}
	return s.execute(w, r, c, pid, src)
}

// executeInProject serves POST /svc/projects/<pid>/execute, where the platform's Ruby SDK
// executes (at 0.6 under /svc/app/projects): what executor3 takes, for a report of the
// project in the path, with the same answer.
func (s *Server) executeInProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	pid, src, err := s.projectSource(w, r, c)
	if err != nil {
		return err
	}
	return s.execute(w, r, c, pid, src)
}

// projectSource reads an execution of the route's project from the body.
func (s *Server) projectSource(w http.ResponseWriter, r *http.Request, c *caller) (string, xtab.Source, error) {
	var req executeRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return "", xtab.Source{}, err
	}
	pid, src, err := req.source()
	if err != nil {
		return "", xtab.Source{}, err
	}
	if pid != c.project.ID {
		return "", xtab.Source{}, badField("report_req", "must name a report of project "+c.project.ID+", the project of the path")
	}
	return pid, src, nil
}

// execute starts an execution and answers 201 with its reportResult2 and execResult.
func (s *Server) execute(w http.ResponseWriter, r *http.Request, c *caller, pid string, src xtab.Source) error {
	res, err := s.executor.Execute(r.Context(), pid, c.UserID, src)
	if err != nil {
		return mdError(err)
	}
	respond(w, r, http.StatusCreated, resultJSON(res))
	return nil
}

// executeNeeds is what executing src asks of the caller: canExecute, and
// reading the report or report definition it names.
func executeNeeds(src xtab.Source) notify.Needs {
	n := notify.Needs{Execute: true}
	switch {
	case src.Report != "":
		n.Objects = []notify.Named{{URI: src.Report, Categories: []string{analytics.CategoryReport}, Noun: "report",
			Field: xtab.FieldReport}}
	case src.Definition != "":
		n.Objects = []notify.Named{{URI: src.Definition, Categories: []string{analytics.CategoryReportDefinition},
			Noun: "report definition", Field: xtab.FieldDefinition}}
	}
	return n
}

// getResultObject serves GET on an execution's reportResult2 URI: the same object
// executor3 answered.
func (s *Server) getResultObject(w http.ResponseWriter, r *http.Request, c *caller) error {
	err := s.executor.Visible(r.Context(), c.project.ID, c.UserID, r.PathValue("oid"))
	if errors.Is(err, xtab.ErrNoResult) {
		return notFound("md", "Object ID %s not found", r.PathValue("oid"))
	}
	if err != nil {
		return err
	}
	res, err := s.executor.Object(r.Context(), c.project.ID, r.PathValue("oid"))
	if errors.Is(err, xtab.ErrNoResult) {
		return notFound("md", "Object ID %s not found", r.PathValue("oid"))
	}
	if err != nil {
		return err
	}
	respond(w, r, http.StatusOK, resultJSON(res))
	return nil
}

func resultJSON(res xtab.Result) reportResultJSON {
	created, author := timestamp(res.Created), profileURI(res.Author)
	return reportResultJSON{
		ReportResult2: reportResultBody{
			Content: reportResultContent{DataResult: res.DataResultURI(), ReportDefinition: res.Definition, ReportView: res.View},
			Meta: objectMetaJSON{Author: author, URI: res.URI(), Tags: "", Created: created, Identifier: "reportResult2." + res.ID,
				Deprecated: "0", Summary: "", Title: res.View.ReportName, Category: "reportResult2", Updated: created, Contributor: author},
		},
		ExecResult: execResultBody{ReportView: res.View, DataResult: res.DataResultURI()},
	}
}

// dataResult serves GET /svc/md/<pid>/dataResult/<id>: 202 while computing, 204 when
// the result is empty, else a page of xtab_data. A result of another slice of the data
// than the caller's is not found.
func (s *Server) dataResult(w http.ResponseWriter, r *http.Request, c *caller) error {
	pg, err := xtab.ParsePage(r.URL.RawQuery)
	var pe *xtab.PageError
	if errors.As(err, &pe) {
		return badField(pe.Param, pe.Msg)
	}
	id := r.PathValue("id")
	err = s.executor.Visible(r.Context(), c.project.ID, c.UserID, id)
	var state string
	var x *xtab.XTab
	if err == nil {
		state, x, err = s.executor.DataResult(r.Context(), c.project.ID, id, pg)
	}
	var failed *xtab.FailedError
	switch {
	case errors.Is(err, xtab.ErrNoResult):
		return notFound("xtab", "Data result %s not found", id)
	case errors.As(err, &failed):
		return newError(http.StatusInternalServerError, classInternal, "xtab", "Report execution failed: %s", failed.Msg)
	case errors.Is(err, xtab.ErrStopped):
		return newError(http.StatusServiceUnavailable, classUnavailable, "xtab", "The service is stopping; ask again")
	case err != nil:
		return err
	}
	switch {
	case x != nil:
		respondEncoded(w, r, http.StatusOK, append(x.AppendJSON([]byte(`{"xtab_data":`)), '}'))
	case state == store.ResultEmpty:
		w.WriteHeader(http.StatusNoContent)
	default:
		// taskState WAIT is what the platform's Ruby SDK polls on.
		w.Header().Set("Refresh", "1")
		respond(w, r, http.StatusAccepted, map[string]any{"uri": r.URL.RequestURI(), "taskState": map[string]string{"status": "WAIT"}})
	}
	return nil
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		n += btoi(b)
	}
	return n
}
