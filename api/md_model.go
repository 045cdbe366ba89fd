package api

import (
	"net/http"
)

type manageRequest struct {
	Manage *struct {
		MAQL string `json:"maql"`
	} `json:"manage"`
}

// manageModel applies a MAQL script; the answer links the finished task.
func (s *Server) manageModel(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req manageRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if req.Manage == nil {
		return badField("manage", "is required")
	}
	id, err := s.analytics.Manage(r.Context(), c.project.ID, c.UserID, req.Manage.MAQL)
	if err != nil {
		return mdError(err)
	}
	respond(w, r, http.StatusOK, map[string]any{"entries": []map[string]string{
		{"link": taskStatusURI(c.project.ID, id), "category": "tasks-status"},
	}})
	return nil
}

func taskStatusURI(pid, id string) string { return "/svc/md/" + pid + "/tasks/" + id + "/status" }

func (s *Server) taskStatus(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := s.analytics.Task(r.Context(), c.project.ID, r.PathValue("tid"))
	if err != nil {
		return mdError(err)
	}
	writeTaskStatus(w, r, t, taskStatusURI(c.project.ID, t.ID))
	return nil
}

// loadData loads a CSV body into a dataset: ?mode=full (default) or incremental.
// Its route takes csvBody.
func (s *Server) loadData(w http.ResponseWriter, r *http.Request, c *caller) error {
	s.longDeadlines(w)
	body := http.MaxBytesReader(w, r.Body, s.maxLoad)
	res, err := s.analytics.Load(r.Context(), c.project.ID, r.PathValue("dataset"), r.URL.Query().Get("mode"), body)
	if err != nil {
		return mdError(err)
	}
	respond(w, r, http.StatusOK, map[string]any{"dataLoad": map[string]any{
		"dataset": res.Dataset, "mode": res.Mode, "rows": res.Rows, "dataVersion": res.DataVersion,
	}})
	return nil
}
