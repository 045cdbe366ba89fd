package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// Exporter renders report results into files off the request path.
type Exporter interface {
	Start(ctx context.Context, projectID, resultID, format string) (store.Export, error)
	Get(ctx context.Context, id string) (store.Export, error)
}

type exportRequest struct {
	ResultReq *struct {
		Report string `json:"report"`
		Format string `json:"format"`
		// Result is the whole answer of an execution, as the platform's Ruby and Java
		// SDKs send it in place of report: its reportResult2.meta.uri names the result.
		Result json.RawMessage `json:"result"`
	} `json:"result_req"`
}

// resultURI returns the report result URI the request names, in report or in result.
func (req *exportRequest) resultURI() (string, string, error) {
	in := req.ResultReq
	if in.Result == nil || string(in.Result) == "null" {
		return in.Report, "result_req.report", nil
	}
	if in.Report != "" {
		return "", "", badRequest("api", "Give either %s or %s, not both", "result_req.report", "result_req.result")
	}
	var answer struct {
		ReportResult2 *struct {
			Meta struct {
				URI string `json:"uri"`
			} `json:"meta"`
		} `json:"reportResult2"`
	}
	const field = "result_req.result.reportResult2.meta.uri"
	if json.Unmarshal(in.Result, &answer) != nil || answer.ReportResult2 == nil {
		return "", "", badField(field, "is required: result must be the answer of an execution")
	}
	return answer.ReportResult2.Meta.URI, field, nil
}

func exportURI(pid, id string) string { return "/svc/exporter/result/" + pid + "/" + id }

// startExport serves POST /svc/exporter/executor: 201 with the URI to poll.
func (s *Server) startExport(w http.ResponseWriter, r *http.Request, c *caller) error {
	if s.exporter == nil {
		return newError(http.StatusServiceUnavailable, classUnavailable, "exporter", "Report export is not available")
	}
	var req exportRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	in := req.ResultReq
	if in == nil {
		return badField("result_req", "is required")
	}
	report, field, err := req.resultURI()
	if err != nil {
		return err
	}
	pid, id, ok := wire.ParseObjURI(report)
	if !ok {
		return badField(field, "must be the report result URI an execution returned, /svc/md/<project>/obj/<id>")
	}
	if _, ok := export.Formats[strings.ToUpper(in.Format)]; !ok {
		return badField("result_req.format", "must be one of PDF, CSV, PNG, XLS, HTML")
	}
	if err := s.authorizeProject(r, c, pid, permProjectView, notify.Needs{Export: true}); err != nil {
		return err
	}
	if s.executor != nil {
		// Only a result of the slice of the data the caller sees is theirs to export.
		err := s.executor.Visible(r.Context(), pid, c.UserID, id)
		if errors.Is(err, xtab.ErrNoResult) {
			return notFound("exporter", "Report result %s not found", report)
		}
		if err != nil {
			return err
		}
	}
	return s.startExportOf(w, r, pid, id, in.Format, report)
}

// startExportOf starts exporting a result and answers 201 with the URI to poll.
func (s *Server) startExportOf(w http.ResponseWriter, r *http.Request, pid, resultID, format, report string) error {
	e, err := s.exporter.Start(r.Context(), pid, resultID, format)
	if errors.Is(err, export.ErrNoResult) {
		return notFound("exporter", "Report result %s not found", report)
	}
	if err != nil {
		return err
	}
	uri := exportURI(e.ProjectID, e.ID)
	w.Header().Set("Location", uri)
	respond(w, r, http.StatusCreated, uriJSON(uri))
	return nil
}

// exportRaw serves the platform's raw export, POST /svc/projects/<pid>/execute/raw with a
// report_req as executor3 takes it (the Java SDK's ExportService, and the Ruby SDK under
// /svc/app/projects): it executes the report and exports the result as CSV, which is
// polled and downloaded at the answer's uri like any export. Herald's CSV holds the
// values unformatted already, so the raw file and the CSV export are the same file.
func (s *Server) exportRaw(w http.ResponseWriter, r *http.Request, c *caller) error {
	if s.exporter == nil {
		return newError(http.StatusServiceUnavailable, classUnavailable, "exporter", "Report export is not available")
	}
	pid, src, err := s.projectSource(w, r, c)
	if err != nil {
		return err
	}
	res, err := s.executor.Execute(r.Context(), pid, c.UserID, src)
	if err != nil {
		return mdError(err)
	}
	return s.startExportOf(w, r, pid, res.ID, "CSV", res.URI())
}

// getExport serves GET /svc/exporter/result/<pid>/<id>: 202 while rendering,
// then the file, 204 when the report has no data.
func (s *Server) getExport(w http.ResponseWriter, r *http.Request, c *caller) error {
	if s.exporter == nil {
		return newError(http.StatusServiceUnavailable, classUnavailable, "exporter", "Report export is not available")
	}
	id := r.PathValue("id")
	e, err := s.exporter.Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && e.ProjectID != c.project.ID) {
		return notFound("exporter", "Export %s not found or expired", id)
	}
	if err != nil {
		return err
	}
	switch e.State {
	case store.ExportRunning:
		w.Header().Set("Refresh", "1")
		respond(w, r, http.StatusAccepted, uriJSON(exportURI(e.ProjectID, e.ID)))
		return nil
	case store.ExportEmpty:
		w.WriteHeader(http.StatusNoContent)
		return nil
	case store.ExportFailed:
		if strings.Contains(e.Error, export.ErrNoResult.Error()) {
			return notFound("exporter", "Report result %s not found", e.ResultID)
		}
		return newError(http.StatusInternalServerError, classInternal, "exporter", "The export failed: %s", e.Error)
	}
	f, err := os.Open(e.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	s.longDeadlines(w)
	name := export.FileName(e)
	w.Header().Set("Content-Type", render.ContentType(e.Format))
	w.Header().Set("Content-Disposition", contentDisposition(name))
	http.ServeContent(w, r, "", e.Finished, f)
	return nil
}

// contentDisposition names a download: filename= holds an ASCII fallback made
// only of letters, digits, space, '-', '_' and '.', with no leading dot and no
// "..", so that no client can read a path or a header into it; filename*
// holds the UTF-8 name (slashes and backslashes replaced) percent-encoded as
// RFC 8187 asks.
func contentDisposition(name string) string {
	name = strings.NewReplacer("/", "_", "\\", "_").Replace(name)
	ascii := []byte(name)
	for i, b := range ascii {
		safe := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte(" -_.", b) >= 0
		if !safe {
			ascii[i] = '_'
		}
	}
	fallback := strings.TrimLeft(strings.ReplaceAll(string(ascii), "..", "_"), ". ")
	if fallback == "" {
		fallback = "download"
	}
	var ext strings.Builder
	for _, b := range []byte(name) {
		if 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("!#$&+-.^_`|~", b) >= 0 {
			ext.WriteByte(b)
		} else {
			fmt.Fprintf(&ext, "%%%02X", b)
		}
	}
	return `attachment; filename="` + fallback + `"; filename*=UTF-8''` + ext.String()
}
