package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

type projectJSON struct {
	Project projectBody `json:"project"`
}

type projectBody struct {
	Content projectContent `json:"content"`
	Links   projectLinks   `json:"links"`
	Meta    projectMeta    `json:"meta"`
}

// projectLinks are the twelve links of a project that the spec lists. Where Herald has
// none of a thing (connectors, invitations, public artifacts, templates) the link answers
// an empty list; ldm answers the data model as JSON and ldm_thumbnail a picture of it.
type projectLinks struct {
	Self            string `json:"self"`
	Roles           string `json:"roles"`
	Users           string `json:"users"`
	UserRoles       string `json:"userRoles"`       // the caller's roles
	UserPermissions string `json:"userPermissions"` // the caller's permissions
	Metadata        string `json:"metadata"`
	LDM             string `json:"ldm"`
	LDMThumbnail    string `json:"ldm_thumbnail"`
	Connectors      string `json:"connectors"`
	Invitations     string `json:"invitations"`
	PublicArtifacts string `json:"publicartifacts"`
	Templates       string `json:"templates"`
}

type projectContent struct {
	GuidedNavigation string `json:"guidedNavigation"`
	IsPublic         string `json:"isPublic"`
	State            string `json:"state"`
}

type projectMeta struct {
	Title           string `json:"title"`
	Summary         string `json:"summary"`
	ProjectTemplate string `json:"projectTemplate,omitempty"`
	Created         string `json:"created"`
	Updated         string `json:"updated"`
	Author          string `json:"author"`
	Contributor     string `json:"contributor"`
}

// projectOf is the project as uid sees it: the links name uid's roles and permissions.
func projectOf(p store.Project, uid string) projectJSON {
	self := projectURI(p.ID)
	md := "/svc/md/" + p.ID
	return projectJSON{Project: projectBody{
		Content: projectContent{
			GuidedNavigation: strconv.Itoa(p.GuidedNavigation),
			IsPublic:         strconv.Itoa(btoi(p.IsPublic)),
			State:            p.State,
		},
		Links: projectLinks{
			Self: self, Roles: self + "/roles", Users: self + "/users", UserRoles: self + "/users/" + uid + "/roles",
			UserPermissions: self + "/users/" + uid + "/permissions", Metadata: md,
			LDM: self + "/ldm", LDMThumbnail: self + "/ldm?thumbnail=1", Connectors: self + "/connectors",
			Invitations: self + "/invitations", PublicArtifacts: self + "/publicartifacts", Templates: md + "/templates",
		},
		Meta: projectMeta{
			Title: p.Title, Summary: p.Summary, ProjectTemplate: p.Template,
			Created: timestamp(p.Created), Updated: timestamp(p.Updated),
			Author: profileURI(p.Author), Contributor: profileURI(p.Contributor),
		},
	}}
}

type createProjectRequest struct {
	Project *struct {
		Content *struct {
			GuidedNavigation   *looseString `json:"guidedNavigation"`
			AuthorizationToken string       `json:"authorizationToken"` // accepted for compatibility; ignored
			Driver             string       `json:"driver"`             // accepted for compatibility; ignored
			Environment        string       `json:"environment"`        // accepted for compatibility; ignored
		} `json:"content"`
		Meta *struct {
			Title           string `json:"title"`
			Summary         string `json:"summary"`
			ProjectTemplate string `json:"projectTemplate"`
		} `json:"meta"`
	} `json:"project"`
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req createProjectRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	in := req.Project
	switch {
	case in == nil:
		return badField("project", "is required")
	case in.Meta == nil:
		return badField("project.meta", "is required")
	case strings.TrimSpace(in.Meta.Title) == "":
		return badField("project.meta.title", "is required")
	case utf8.RuneCountInString(in.Meta.Title) > 255:
		return badField("project.meta.title", "must be at most 255 characters")
	case utf8.RuneCountInString(in.Meta.Summary) > 10000:
		return badField("project.meta.summary", "must be at most 10000 characters")
	case in.Meta.ProjectTemplate != "" && !strings.HasPrefix(in.Meta.ProjectTemplate, "/"):
		return badField("project.meta.projectTemplate", "must be a template URI")
	}
	guided := 1
	if in.Content != nil && in.Content.GuidedNavigation != nil {
		switch *in.Content.GuidedNavigation {
		case "0":
			guided = 0
		case "1":
		default:
			return badField("project.content.guidedNavigation", "must be 0 or 1")
		}
	}
	now := s.now()
	p := store.Project{
		ID: store.NewID(32), Title: in.Meta.Title, Summary: in.Meta.Summary, Template: in.Meta.ProjectTemplate,
		GuidedNavigation: guided, State: store.ProjectEnabled, Author: c.UserID, Contributor: c.UserID,
		Created: now, Updated: now,
	}
	if err := s.store.CreateProject(r.Context(), p, notify.RoleAdmin); err != nil {
		return err
	}
	w.Header().Set("Location", projectURI(p.ID))
	respond(w, r, http.StatusCreated, uriJSON(projectURI(p.ID)))
	return nil
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	respond(w, r, http.StatusOK, projectOf(c.project, c.UserID))
	return nil
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, c *caller) error {
	err := s.store.DeleteProject(r.Context(), c.project.ID, c.UserID, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return notFound("projects", "Project %s not found", c.project.ID)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listUserProjects answers the spec's unpaged form, or the paged form when
// the query has offset or limit.
func (s *Server) listUserProjects(w http.ResponseWriter, r *http.Request, c *caller) error {
	uid := r.PathValue("uid")
	if uid != c.UserID {
		if _, err := s.userOf(r, uid); err != nil {
			return err
		}
	}
	offset, limit, paged, err := paging(r, 100, 500)
	if err != nil {
		return err
	}
	if !paged {
		offset, limit = 0, -1
	}
	key := listingKey{path: r.URL.Path, user: uid, caller: c.UserID, offset: offset, limit: limit, paged: paged}
	version := s.store.ProjectsVersion()
	body, ok := s.listings.get(key, version)
	if !ok {
		if body, err = s.userProjects(r, key); err != nil {
			return err
		}
		s.listings.put(key, version, body)
	}
	respondEncoded(w, r, http.StatusOK, body)
	return nil
}

// userProjects reads and encodes the listing key asks for.
func (s *Server) userProjects(r *http.Request, key listingKey) ([]byte, error) {
	projects, err := s.store.ListUserProjects(r.Context(), key.user, key.offset, key.limit)
	if err != nil {
		return nil, err
	}
	items := make([]projectJSON, 0, len(projects))
	for _, p := range projects {
		items = append(items, projectOf(p, key.caller))
	}
	if !key.paged {
		return json.Marshal(map[string]any{"projects": items})
	}
	total, err := s.store.CountUserProjects(r.Context(), key.user)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"projects": map[string]any{
		"paging": pageOf(key.path, key.offset, key.limit, len(items), total, ""), "items": items,
	}})
}
