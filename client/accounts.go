package client

import (
	"context"
	"fmt"
	"net/http"
)

// NewUser is the account of a domain user to create.
type NewUser struct {
	Login       string  `json:"login"`
	Password    string  `json:"password"`
	FirstName   string  `json:"firstName"`
	LastName    string  `json:"lastName"`
	Timezone    *string `json:"timezone,omitempty"`
	Country     string  `json:"country,omitempty"`
	PhoneNumber string  `json:"phoneNumber,omitempty"`
}

// CreateUser creates a user in the domain and returns its profile URI.
func (c *Client) CreateUser(ctx context.Context, domain string, u NewUser) (string, error) {
	body := map[string]any{"accountSetting": map[string]any{
		"login": u.Login, "password": u.Password, "verifyPassword": u.Password,
		"firstName": u.FirstName, "lastName": u.LastName, "timezone": u.Timezone,
		"country": u.Country, "phoneNumber": u.PhoneNumber,
	}}
	var out struct {
		URI string `json:"uri"`
	}
	err := c.Do(ctx, http.MethodPost, "/svc/account/domains/"+domain+"/users", body, &out)
	return out.URI, err
}

// DeleteUser deletes the user with the given profile URI.
func (c *Client) DeleteUser(ctx context.Context, profileURI string) error {
	return c.Do(ctx, http.MethodDelete, profileURI, nil, nil)
}

// Project is a project as listings show it.
type Project struct {
	Content struct {
		GuidedNavigation string `json:"guidedNavigation"`
		IsPublic         string `json:"isPublic"`
		State            string `json:"state"`
	} `json:"content"`
	Links map[string]string `json:"links"`
	Meta  struct {
		Title       string `json:"title"`
		Summary     string `json:"summary"`
		Created     string `json:"created"`
		Updated     string `json:"updated"`
		Author      string `json:"author"`
		Contributor string `json:"contributor"`
	} `json:"meta"`
}

// CreateProject creates a project and returns its URI.
func (c *Client) CreateProject(ctx context.Context, title, summary string) (string, error) {
	body := map[string]any{"project": map[string]any{
		"content": map[string]any{"guidedNavigation": 1},
		"meta":    map[string]any{"title": title, "summary": summary},
	}}
	var out struct {
		URI string `json:"uri"`
	}
	err := c.Do(ctx, http.MethodPost, "/svc/projects/", body, &out)
	return out.URI, err
}

// Project returns the project at projectURI.
func (c *Client) Project(ctx context.Context, projectURI string) (Project, error) {
	var out struct {
		Project Project `json:"project"`
	}
	err := c.Do(ctx, http.MethodGet, projectURI, nil, &out)
	return out.Project, err
}

// Projects lists the projects of the user with the given profile URI.
func (c *Client) Projects(ctx context.Context, profileURI string) ([]Project, error) {
	var out struct {
		Projects []struct {
			Project Project `json:"project"`
		} `json:"projects"`
	}
	if err := c.Do(ctx, http.MethodGet, profileURI+"/projects", nil, &out); err != nil {
		return nil, err
	}
	ps := make([]Project, len(out.Projects))
	for i, p := range out.Projects {
		ps[i] = p.Project
	}
	return ps, nil
}

// RoleURI looks up the URI of the project's role with the given identifier (e.g. editorRole).
func (c *Client) RoleURI(ctx context.Context, projectURI, identifier string) (string, error) {
	var list struct {
		ProjectRoles struct {
			Roles []string `json:"roles"`
		} `json:"projectRoles"`
	}
	if err := c.Do(ctx, http.MethodGet, projectURI+"/roles", nil, &list); err != nil {
		return "", err
	}
	for _, uri := range list.ProjectRoles.Roles {
		var r struct {
			ProjectRole struct {
				Meta struct {
					Identifier string `json:"identifier"`
				} `json:"meta"`
			} `json:"projectRole"`
		}
		if err := c.Do(ctx, http.MethodGet, uri, nil, &r); err != nil {
			return "", err
		}
		if r.ProjectRole.Meta.Identifier == identifier {
			return uri, nil
		}
	}
	return "", fmt.Errorf("role %s not found in %s", identifier, projectURI)
}

// UsersUpdateResult is the per-user outcome of a project users request.
type UsersUpdateResult struct {
	Successful []string `json:"successful"`
	Failed     []struct {
		User    string `json:"user"`
		Message string `json:"message"`
	} `json:"failed"`
}

// AddProjectUser adds the user to the project with the given roles, enabled.
func (c *Client) AddProjectUser(ctx context.Context, projectURI, profileURI string, roleURIs ...string) (UsersUpdateResult, error) {
	body := map[string]any{"user": map[string]any{
		"content": map[string]any{"status": "ENABLED", "userRoles": roleURIs},
		"links":   map[string]any{"self": profileURI},
	}}
	return c.updateUsers(ctx, projectURI, body)
}

// SetProjectUserStatus enables (true) or disables (false) members of the project.
func (c *Client) SetProjectUserStatus(ctx context.Context, projectURI string, enabled bool, profileURIs ...string) (UsersUpdateResult, error) {
	status := "DISABLED"
	if enabled {
		status = "ENABLED"
	}
	users := make([]any, len(profileURIs))
	for i, p := range profileURIs {
		users[i] = map[string]any{"user": map[string]any{
			"content": map[string]any{"status": status}, "links": map[string]any{"self": p},
		}}
	}
	return c.updateUsers(ctx, projectURI, map[string]any{"users": users})
}

func (c *Client) updateUsers(ctx context.Context, projectURI string, body any) (UsersUpdateResult, error) {
	var out struct {
		Result UsersUpdateResult `json:"projectUsersUpdateResult"`
	}
	err := c.Do(ctx, http.MethodPost, projectURI+"/users", body, &out)
	return out.Result, err
}
