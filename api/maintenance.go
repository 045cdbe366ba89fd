package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/maintenance"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/store"
)

// Maintenance validates, exports and imports projects, each as a task.
type Maintenance interface {
	Task(ctx context.Context, pid, id string) (store.Task, error)
	Validate(ctx context.Context, c maintenance.Caller, pid string, checks []string) (store.Task, error)
	ExportProject(ctx context.Context, c maintenance.Caller, pid string, opt maintenance.ExportOptions) (maintenance.Artifact, error)
	ImportProject(ctx context.Context, c maintenance.Caller, pid, token string) (store.Task, error)
	ExportObjects(ctx context.Context, c maintenance.Caller, pid string, uris []string) (maintenance.Artifact, error)
	ImportObjects(ctx context.Context, c maintenance.Caller, pid, token string, opt maintenance.ImportOptions) (store.Task, error)
}

// maintenanceRoutes registers validation, project export and import and partial
// metadata export and import, when the server has a maintenance service.
func (s *Server) maintenanceRoutes() {
	if s.maintenance == nil {
		return
	}
	const md = "/svc/md/{pid}"
	s.route("GET "+md+"/maintenance", permProjectView, s.about("maintenance", "Export and import", maintenanceLinks))
	s.route("GET "+md+"/etltask/{tid}", permProjectView, s.etlTask)
	s.route("POST "+md+"/validate", permProjectEdit, s.validateProject)
	s.route("POST "+md+"/validate/{$}", permProjectEdit, s.validateProject)
	s.route("GET "+md+"/validate", permProjectView, s.listValidations)
	s.route("GET "+md+"/validate/{$}", permProjectView, s.listValidations)
	s.route("GET "+md+"/validate/{tid}", permProjectView, s.validationResult)
	s.route("POST "+md+"/maintenance/export", permProjectManage, s.exportProject)
	s.route("POST "+md+"/maintenance/import", permProjectManage, s.importProject)
	s.route("POST "+md+"/maintenance/partialmdexport", permProjectEdit, s.partialExport)
	s.route("POST "+md+"/maintenance/partialmdimport", permProjectEdit, s.partialImport)
}

func (s *Server) maintenanceCaller(c *caller) maintenance.Caller {
	return maintenance.Caller{UserID: c.UserID, Login: c.Login, DomainAdmin: c.IsDomainAdmin && c.Domain == s.domain}
}

func etlTaskURI(pid, id string) string  { return "/svc/md/" + pid + "/etltask/" + id }
func validateURI(pid, id string) string { return "/svc/md/" + pid + "/validate/" + id }

// maintenanceError turns the maintenance service's errors into API errors.
func maintenanceError(err error, tokenField string) error {
	var te *maintenance.TokenError
	switch {
	case errors.As(err, &te):
		return badField(tokenField, te.Reason)
	case errors.Is(err, analytics.ErrNotEmpty):
		return badRequest("md", "The project is not empty; a project can be imported only into a new, empty project")
	case errors.Is(err, task.ErrBusy):
		e := newError(http.StatusServiceUnavailable, classUnavailable, "md", "Too many tasks are waiting to run; try again later")
		e.header = http.Header{"Retry-After": {"10"}}
		return e
	}
	return mdError(err)
}

// etlTask is the state of an export or import task: always 200 with taskState. The
// platform's SDKs read a partial import's task as a wTaskStatus, so its answer has that
// beside taskState; at API level 3 (the Java SDK, whose reader takes one wrapper only) it
// is the wTaskStatus alone, 202 while the import runs, as tasks/<id>/status answers.
func (s *Server) etlTask(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := s.maintenance.Task(r.Context(), c.project.ID, r.PathValue("tid"))
	if err != nil {
		return mdError(err)
	}
	poll := etlTaskURI(c.project.ID, t.ID)
	if t.Kind == maintenance.KindPartialImport && apiLevel(r) >= wrapperLevel {
		writeTaskStatus(w, r, t, poll)
		return nil
	}
	body := map[string]any{"taskState": map[string]string{"status": t.Status, "msg": etlMessage(t)}}
	if t.Kind == maintenance.KindPartialImport {
		body["wTaskStatus"] = taskStatusJSON(r, t, poll)
	}
	respond(w, r, http.StatusOK, body)
	return nil
}

// etlMessage is a task's taskState.msg: its first error, or the summary of its result.
func etlMessage(t store.Task) string {
	switch t.Status {
	case store.TaskError:
		if msgs := task.Decode(t.Messages); len(msgs) > 0 {
			return msgs[0].Text()
		}
	case store.TaskOK:
		var sum maintenance.Summary
		if json.Unmarshal(t.Result, &sum) == nil {
			return sum.Msg
		}
	}
	return ""
}

type validateRequest struct {
	ValidateProject []string `json:"validateProject"`
}

func (s *Server) validateProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req validateRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	t, err := s.maintenance.Validate(r.Context(), s.maintenanceCaller(c), c.project.ID, req.ValidateProject)
	if err != nil {
		return maintenanceError(err, "")
	}
	uri := validateURI(c.project.ID, t.ID)
	w.Header().Set("Location", uri)
	task := map[string]any{"link": map[string]string{"poll": uri}}
	if apiLevel(r) >= wrapperLevel {
		respond(w, r, http.StatusCreated, map[string]any{"asyncTask": task})
		return nil
	}
	// The spec's {uri}, and the asyncTask the platform's SDKs read the poll link from.
	respond(w, r, http.StatusCreated, map[string]any{"uri": uri, "asyncTask": task})
	return nil
}

// listValidations lists the checks; availableValidations beside the list is where the
// platform's Java SDK reads them from.
func (s *Server) listValidations(w http.ResponseWriter, r *http.Request, c *caller) error {
	respond(w, r, http.StatusOK, map[string]any{
		"projectValidateAvailable": map[string]any{
			"availableValidations": analytics.Checks,
			"links":                map[string]string{"validate": validateURI(c.project.ID, "")},
		},
		"availableValidations": analytics.Checks,
	})
	return nil
}

// validationResult answers a validation's URI: its status while it runs or when it
// failed, its result when it is done.
func (s *Server) validationResult(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := s.maintenance.Task(r.Context(), c.project.ID, r.PathValue("tid"))
	if err == nil && t.Kind != maintenance.KindValidate {
		err = &analytics.NotFoundError{Kind: "task", ID: t.ID}
	}
	if err != nil {
		return mdError(err)
	}
	if t.Status == store.TaskOK {
		respond(w, r, http.StatusOK, map[string]json.RawMessage{"projectValidateResult": t.Result})
		return nil
	}
	writeTaskStatus(w, r, t, validateURI(c.project.ID, t.ID))
	return nil
}

// writeTaskStatus writes a wTaskStatus: 202 with Refresh while the task runs, 200 once it
// failed or finished.
func writeTaskStatus(w http.ResponseWriter, r *http.Request, t store.Task, poll string) {
	code := http.StatusOK
	if t.Status == store.TaskRunning {
		code = http.StatusAccepted
		w.Header().Set("Refresh", "1")
	}
	respond(w, r, code, map[string]any{"wTaskStatus": taskStatusJSON(r, t, poll)})
}

// taskStatusJSON is the body of a wTaskStatus: the status, the poll link and the errors.
func taskStatusJSON(r *http.Request, t store.Task, poll string) map[string]any {
	msgs := []map[string]errorContent{}
	for _, b := range task.Decode(t.Messages) {
		msgs = append(msgs, map[string]errorContent{"error": {ErrorClass: b.ErrorClass, Component: b.Component,
			Message: b.Message, Parameters: b.Parameters, RequestID: requestID(r.Context())}})
	}
	return map[string]any{"status": t.Status, "poll": poll, "links": map[string]string{"poll": poll}, "messages": msgs}
}

type projectExportRequest struct {
	ExportProject *struct {
		ExportUsers     flag     `json:"exportUsers"`
		ExportData      flag     `json:"exportData"`
		AuthorizedUsers []string `json:"authorizedUsers"`
		// Options of the original platform that its SDKs send (the Java SDK by default).
		// A project's export holds no subscriptions to exclude, and an archive is good
		// wherever Herald runs, so they change nothing here.
		ExcludeSchedules      flag `json:"excludeSchedules"`
		CrossDataCenterExport flag `json:"crossDataCenterExport"`
	} `json:"exportProject"`
}

type artifactBody struct {
	Status struct {
		URI string `json:"uri"`
	} `json:"status"`
	Token string `json:"token"`
}

func (s *Server) exportProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req projectExportRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.ExportProject == nil {
		return badField("exportProject", "is required")
	}
	e := req.ExportProject
	a, err := s.maintenance.ExportProject(r.Context(), s.maintenanceCaller(c), c.project.ID, maintenance.ExportOptions{
		Users: bool(e.ExportUsers), Data: bool(e.ExportData), Authorized: e.AuthorizedUsers})
	if err != nil {
		return maintenanceError(err, "")
	}
	var body artifactBody
	body.Status.URI, body.Token = etlTaskURI(c.project.ID, a.Task.ID), a.Token
	respond(w, r, http.StatusOK, map[string]any{"exportArtifact": body})
	return nil
}

type projectImportRequest struct {
	ImportProject *struct {
		Token string `json:"token"`
	} `json:"importProject"`
}

func (s *Server) importProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req projectImportRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.ImportProject == nil || req.ImportProject.Token == "" {
		return badField("importProject.token", "is required")
	}
	t, err := s.maintenance.ImportProject(r.Context(), s.maintenanceCaller(c), c.project.ID, req.ImportProject.Token)
	if err != nil {
		return maintenanceError(err, "importProject.token")
	}
	respond(w, r, http.StatusOK, uriJSON(etlTaskURI(c.project.ID, t.ID)))
	return nil
}

type partialExportRequest struct {
	PartialMDExport *struct {
		URIs []string `json:"uris"`
		// Options of the original platform that clients still send; they change nothing here.
		ExportAttributeProperties flag `json:"exportAttributeProperties"`
		CrossDataCenterExport     flag `json:"crossDataCenterExport"`
	} `json:"partialMDExport"`
}

func (s *Server) partialExport(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req partialExportRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.PartialMDExport == nil {
		return badField("partialMDExport", "is required")
	}
	a, err := s.maintenance.ExportObjects(r.Context(), s.maintenanceCaller(c), c.project.ID, req.PartialMDExport.URIs)
	if err != nil {
		return maintenanceError(err, "")
	}
	var body artifactBody
	body.Status.URI, body.Token = taskStatusURI(c.project.ID, a.Task.ID), a.Token
	respond(w, r, http.StatusOK, map[string]any{"partialMDArtifact": body})
	return nil
}

type partialImportRequest struct {
	PartialMDImport *struct {
		Token            string `json:"token"`
		OverwriteNewer   *flag  `json:"overwriteNewer"`
		UpdateLDMObjects flag   `json:"updateLDMObjects"`
		// An option of the original platform that clients still send; it changes nothing here.
		ImportAttributeProperties flag `json:"importAttributeProperties"`
	} `json:"partialMDImport"`
}

func (s *Server) partialImport(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req partialImportRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.PartialMDImport == nil || req.PartialMDImport.Token == "" {
		return badField("partialMDImport.token", "is required")
	}
	p := req.PartialMDImport
	opt := maintenance.ImportOptions{OverwriteNewer: p.OverwriteNewer == nil || bool(*p.OverwriteNewer),
		UpdateLDMObjects: bool(p.UpdateLDMObjects)}
	t, err := s.maintenance.ImportObjects(r.Context(), s.maintenanceCaller(c), c.project.ID, p.Token, opt)
	if err != nil {
		return maintenanceError(err, "partialMDImport.token")
	}
	respond(w, r, http.StatusOK, uriJSON(etlTaskURI(c.project.ID, t.ID)))
	return nil
}
