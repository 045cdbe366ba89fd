package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/wire"
)

// recipientsPerPage is how many recipients the recipients page shows at once.
const recipientsPerPage = 50

// audience is who a subscription goes to and what it reads them from, named
// for people: members by login, roles and ways by title, a burst's report,
// label and attribute by title.
type audience struct {
	Members map[string]string // profile URI → login
	Roles   map[string]string // role URI → title
	Objects map[string]string // object URI → title
}

// audienceOf names what a subscription's recipients or burst refer to.
func (c *Console) audienceOf(q *req, pid string, s *wire.Subscription) (audience, error) {
	a := audience{Members: map[string]string{}, Roles: map[string]string{}, Objects: map[string]string{}}
	if s.Recipients == nil && s.Burst == nil {
		return a, nil
	}
	var users struct {
		Users []struct {
			User struct {
				Content struct{ Login string } `json:"content"`
				Links   struct{ Self string }  `json:"links"`
			} `json:"user"`
		} `json:"users"`
	}
	if _, err := q.do(q.ctx, http.MethodGet, "/svc/projects/"+pid+"/users", nil, &users); err != nil {
		return a, err
	}
	for _, u := range users.Users {
		a.Members[u.User.Links.Self] = u.User.Content.Login
	}
	if r := s.Recipients; r != nil {
		for _, uri := range r.Roles {
			var role struct {
				ProjectRole struct {
					Meta struct{ Title string } `json:"meta"`
				} `json:"projectRole"`
			}
			if _, err := q.do(q.ctx, http.MethodGet, uri, nil, &role); err != nil {
				return a, err
			}
			a.Roles[uri] = role.ProjectRole.Meta.Title
		}
	}
	if b := s.Burst; b != nil {
		for _, uri := range []string{b.Report, b.Address, b.By} {
			var obj map[string]struct {
				Meta struct{ Title string } `json:"meta"`
			}
			if _, err := q.do(q.ctx, http.MethodGet, uri, nil, &obj); err == nil {
				for _, o := range obj {
					a.Objects[uri] = o.Meta.Title
				}
			}
		}
	}
	return a, nil
}

// recipientItem is one recipient of the recipients page.
type recipientItem struct {
	User        string   `json:"user"`
	Address     string   `json:"address"`
	Addresses   []string `json:"addresses"`
	Filters     []string `json:"filters"`
	Description []string `json:"description"`
	Slice       int      `json:"slice"`
}

// recipients shows who the subscription goes to now, with the slice of the
// data each sees, and a preview as each of them.
func (c *Console) recipients(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	page, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	page = max(page, 0)
	var out struct {
		Recipients struct {
			Items   []recipientItem `json:"items"`
			Total   int             `json:"total"`
			Slices  int             `json:"slices"`
			Skipped int             `json:"skipped"`
			Skips   []wire.Skip     `json:"skips"`
			Rows    int             `json:"rows"`
		} `json:"recipients"`
	}
	path := fmt.Sprintf("%s/%s/recipients?limit=%d&offset=%d", subsPath(pid, q.user), sid, recipientsPerPage, page*recipientsPerPage)
	if _, err := q.do(q.ctx, http.MethodGet, path, nil, &out); err != nil {
		return err
	}
	a, err := c.audienceOf(q, pid, s)
	if err != nil {
		return err
	}
	rs := out.Recipients
	c.render(w, q, http.StatusOK, "recipients", map[string]any{"Title": "Recipients: " + titleOf(s.Meta), "Sub": s, "ID": sid, "PID": pid,
		"R": rs, "A": a, "Page": page, "More": (page+1)*recipientsPerPage < rs.Total})
	return nil
}

// previewKey is how a preview names a recipient: a member's profile URI,
// or an address.
func previewKey(it recipientItem) string {
	if it.User != "" {
		return it.User
	}
	return it.Address
}

// runPage shows one run with its deliveries a page at a time, searched by
// recipient (text an address contains, or a member's profile URI).
func (c *Console) runPage(w http.ResponseWriter, q *req) error {
	pid, sid, rid := q.r.PathValue("pid"), q.r.PathValue("sid"), q.r.PathValue("rid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	page, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	page = max(page, 0)
	who := strings.TrimSpace(q.r.URL.Query().Get("recipient"))
	var out wire.RunDoc
	path := fmt.Sprintf("%s/%s/runs/%s?limit=%d&offset=%d&recipient=%s", subsPath(pid, q.user), sid, rid, recipientsPerPage,
		page*recipientsPerPage, url.QueryEscape(who))
	if _, err := q.do(q.ctx, http.MethodGet, path, nil, &out); err != nil {
		return err
	}
	names, err := c.channelNames(q)
	if err != nil {
		return err
	}
	a, err := c.audienceOf(q, pid, s)
	if err != nil {
		return err
	}
	c.render(w, q, http.StatusOK, "run", map[string]any{"Title": "Run: " + titleOf(s.Meta), "Sub": s, "ID": sid, "PID": pid,
		"Run": out.Run, "Channels": names, "A": a, "Recipient": who, "Page": page,
		"More": (page+1)*recipientsPerPage < out.Run.DeliveriesTotal})
	return nil
}
