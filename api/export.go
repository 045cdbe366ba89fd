package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
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
	} `json:"result_req"`
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
	m := objURI.FindStringSubmatch(in.Report)
	if m == nil {
		return badField("result_req.report", "must be the report result URI an execution returned, /svc/md/<project>/obj/<id>")
	}
	if _, ok := export.Formats[strings.ToUpper(in.Format)]; !ok {
		return badField("result_req.format", "must be one of PDF, CSV, PNG, XLS, HTML")
	}
	if err := s.authorizeProject(r, c, m[1], permProjectView, notify.Needs{Export: true}); err != nil {
		return err
	}
	e, err := s.exporter.Start(r.Context(), m[1], m[2], in.Format)
	if errors.Is(err, export.ErrNoResult) {
		return notFound("exporter", "Report result %s not found", in.Report)
	}
	if err != nil {
		return err
	}
	uri := exportURI(e.ProjectID, e.ID)
	w.Header().Set("Location", uri)
	respond(w, r, http.StatusCreated, uriJSON(uri))
	return nil
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
