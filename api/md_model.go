package api

import (
	"bytes"
	"cmp"
	"net/http"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/render"
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

// projectModel answers the project's ldm link: the data model as the platform's
// projectModel JSON, or, with ?thumbnail=1 (the ldm_thumbnail link), a PNG picture of
// its datasets and their references.
func (s *Server) projectModel(w http.ResponseWriter, r *http.Request, c *caller) error {
	v, err := s.analytics.ModelView(r.Context(), c.project.ID)
	if err != nil {
		return mdError(err)
	}
	if t := r.URL.Query().Get("thumbnail"); t == "" || t == "0" || t == "false" {
		respond(w, r, http.StatusOK, map[string]any{"projectModel": v})
		return nil
	}
	var buf bytes.Buffer
	if err := render.ModelPNG(&buf, modelPicture(v)); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
	return nil
}

// modelPicture lays the view's datasets out for the picture: the datasets first, then the
// date dimensions, with references as indexes.
func modelPicture(v analytics.ModelView) []render.ModelDataset {
	index := map[string]int{}
	out := make([]render.ModelDataset, 0, len(v.Datasets)+len(v.DateDimensions))
	for _, d := range v.Datasets {
		b := d.Dataset
		attrs := len(b.Attributes)
		if b.Anchor != nil {
			attrs++
		}
		index[b.Identifier] = len(out)
		out = append(out, render.ModelDataset{Title: cmp.Or(b.Title, b.Identifier), Attributes: attrs, Facts: len(b.Facts)})
	}
	for _, d := range v.DateDimensions {
		index[d.DateDimension.Name] = len(out)
		out = append(out, render.ModelDataset{Title: cmp.Or(d.DateDimension.Title, d.DateDimension.Name), Date: true})
	}
	for i, d := range v.Datasets {
		for _, ref := range d.Dataset.References {
			if j, ok := index[ref]; ok {
				out[i].References = append(out[i].References, j)
			}
		}
	}
	return out
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
