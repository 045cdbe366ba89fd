package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/heraldhq/herald/engine/cron"
	"github.com/heraldhq/herald/wire"
)

// runsPerPage is how many runs a subscription's page shows at once.
const runsPerPage = 20

func subsPath(pid, uid string) string {
	return "/svc/projects/" + pid + "/users/" + uid + "/subscriptions"
}

func consoleSub(pid, sid string) string { return "/console/projects/" + pid + "/subscriptions/" + sid }

type project struct {
	ID, Title, Summary, State string
}

// projects lists the projects the user belongs to.
func (c *Console) projectList(q *req) ([]project, error) {
	var out struct {
		Projects []struct {
			Project struct {
				Content struct{ State string } `json:"content"`
				Links   struct{ Self string }  `json:"links"`
				Meta    struct{ Title, Summary string }
			} `json:"project"`
		} `json:"projects"`
	}
	if _, err := q.do(q.ctx, http.MethodGet, "/svc/account/profile/"+q.user+"/projects", nil, &out); err != nil {
		return nil, err
	}
	var ps []project
	for _, p := range out.Projects {
		if p.Project.Content.State == "DELETED" {
			continue
		}
		ps = append(ps, project{ID: last(p.Project.Links.Self), Title: p.Project.Meta.Title,
			Summary: p.Project.Meta.Summary, State: p.Project.Content.State})
	}
	return ps, nil
}

func (c *Console) projects(w http.ResponseWriter, q *req) error {
	ps, err := c.projectList(q)
	if err != nil {
		return err
	}
	if len(ps) == 1 && q.r.URL.Query().Get("all") == "" {
		return redirect(w, q, "/console/projects/"+ps[0].ID)
	}
	c.render(w, q, http.StatusOK, "projects", map[string]any{"Title": "Projects", "Projects": ps})
	return nil
}

func (c *Console) project(q *req, pid string) (project, error) {
	ps, err := c.projectList(q)
	if err != nil {
		return project{}, err
	}
	for _, p := range ps {
		if p.ID == pid {
			return p, nil
		}
	}
	return project{}, &apiError{Status: http.StatusNotFound, Message: "You are not a member of this project, or it does not exist."}
}

// schedule is a subscription's triggers for people.
type schedule struct {
	Words []string    // each trigger in words, with its time zone
	Next  []time.Time // the next fires of all triggers together, in order
	Zone  string      // the zone of the first trigger, for showing Next
	Err   string
}

// scheduleOf describes the triggers and computes the next n fires after now.
func scheduleOf(ts []wire.Trigger, now time.Time, n int) schedule {
	var s schedule
	for _, t := range ts {
		if t.TimerEvent == nil {
			continue
		}
		tz := str(t.TimerEvent.Timezone)
		if tz == "" {
			tz = "UTC"
		}
		if s.Zone == "" {
			s.Zone = tz
		}
		expr := str(t.TimerEvent.CronExpression)
		words, err := cron.Describe(expr)
		if err != nil {
			s.Err = err.Error()
			continue
		}
		s.Words = append(s.Words, words+" ("+tz+")")
		sched, err := cron.Parse(expr)
		loc, lerr := time.LoadLocation(tz)
		if err != nil || lerr != nil {
			continue
		}
		at := now
		for range n {
			at = sched.Next(at, loc)
			if at.IsZero() {
				break
			}
			s.Next = append(s.Next, at.In(loc))
		}
	}
	sort.Slice(s.Next, func(i, j int) bool { return s.Next[i].Before(s.Next[j]) })
	s.Next = dedupe(s.Next)
	if len(s.Next) > n {
		s.Next = s.Next[:n]
	}
	return s
}

func dedupe(ts []time.Time) []time.Time {
	out := ts[:0]
	for i, t := range ts {
		if i == 0 || !t.Equal(ts[i-1]) {
			out = append(out, t)
		}
	}
	return out
}

// row is one subscription in a project's list.
type row struct {
	*wire.Subscription
	ID       string
	Schedule schedule
	Last     *wire.Run
}

func (c *Console) subscriptions(w http.ResponseWriter, q *req) error {
	pid := q.r.PathValue("pid")
	p, err := c.project(q, pid)
	if err != nil {
		return err
	}
	var out wire.SubscriptionList
	if _, err := q.do(q.ctx, http.MethodGet, subsPath(pid, q.user), nil, &out); err != nil {
		return err
	}
	now := c.opt.Clock.Now()
	rows := make([]row, 0, len(out.Subscriptions.Items))
	for _, it := range out.Subscriptions.Items {
		s := it.Subscription
		if s == nil {
			continue
		}
		r := row{Subscription: s, ID: subID(s), Schedule: scheduleOf(s.Triggers, now, 1)}
		var runs struct {
			Runs struct {
				Items []wire.RunDoc `json:"items"`
			} `json:"runs"`
		}
		if _, err := q.do(q.ctx, http.MethodGet, subsPath(pid, q.user)+"/"+r.ID+"/runs?limit=1", nil, &runs); err == nil &&
			len(runs.Runs.Items) > 0 {
			r.Last = &runs.Runs.Items[0].Run
		}
		rows = append(rows, r)
	}
	c.render(w, q, http.StatusOK, "subscriptions", map[string]any{"Title": p.Title, "Project": p, "Rows": rows, "Notice": notice(q)})
	return nil
}

// load reads subscription sid of the user in pid.
func (c *Console) load(q *req, pid, sid string) (*wire.Subscription, error) {
	var doc wire.SubscriptionDoc
	_, err := q.do(q.ctx, http.MethodGet, subsPath(pid, q.user)+"/"+sid, nil, &doc)
	if err == nil && doc.Subscription == nil {
		err = fmt.Errorf("GET %s: no subscription in the answer", subsPath(pid, q.user)+"/"+sid)
	}
	return doc.Subscription, err
}

func (c *Console) subscription(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	p, err := c.project(q, pid)
	if err != nil {
		return err
	}
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	page, _ := strconv.Atoi(q.r.URL.Query().Get("page"))
	page = max(page, 0)
	var runs struct {
		Runs struct {
			Items []wire.RunDoc `json:"items"`
		} `json:"runs"`
	}
	path := fmt.Sprintf("%s/%s/runs?limit=%d&offset=%d", subsPath(pid, q.user), sid, runsPerPage+1, page*runsPerPage)
	if _, err := q.do(q.ctx, http.MethodGet, path, nil, &runs); err != nil {
		return err
	}
	list := make([]wire.Run, 0, len(runs.Runs.Items))
	for _, it := range runs.Runs.Items {
		list = append(list, it.Run)
	}
	more := len(list) > runsPerPage
	if more {
		list = list[:runsPerPage]
	}
	names, err := c.channelNames(q)
	if err != nil {
		return err
	}
	reports, metrics, err := c.objects(q, pid)
	if err != nil {
		return err
	}
	a, err := c.audienceOf(q, pid, s)
	if err != nil {
		return err
	}
	names["email"] = "e-mail"
	c.render(w, q, http.StatusOK, "subscription", map[string]any{
		"Title": titleOf(s.Meta), "Project": p, "Sub": s, "ID": sid, "Schedule": scheduleOf(s.Triggers, c.opt.Clock.Now(), 5),
		"Runs": list, "Page": page, "More": more, "Channels": names, "Names": mergeNames(reports, metrics),
		"A": a, "Notice": notice(q),
	})
	return nil
}

// channelNames maps the user's channel URIs to their titles.
func (c *Console) channelNames(q *req) (map[string]string, error) {
	chs, err := c.channelsOf(q)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(chs))
	for _, ch := range chs {
		out[ch.Meta.URI] = ch.Meta.Title
	}
	return out, nil
}

func mergeNames(lists ...[]entry) map[string]string {
	out := map[string]string{}
	for _, l := range lists {
		for _, e := range l {
			out[e.Link] = e.Title
		}
	}
	return out
}

// objects lists the project's reports and metrics.
func (c *Console) objects(q *req, pid string) (reports, metrics []entry, err error) {
	for _, cat := range []string{"reports", "metrics"} {
		var out struct {
			Query struct {
				Entries []entry `json:"entries"`
			} `json:"query"`
		}
		if _, err := q.do(q.ctx, http.MethodGet, "/svc/md/"+pid+"/query/"+cat, nil, &out); err != nil {
			return nil, nil, err
		}
		sort.Slice(out.Query.Entries, func(i, j int) bool { return out.Query.Entries[i].Title < out.Query.Entries[j].Title })
		if cat == "reports" {
			reports = out.Query.Entries
		} else {
			metrics = out.Query.Entries
		}
	}
	return reports, metrics, nil
}

func (c *Console) deleteSubscription(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	if _, err := q.do(q.ctx, http.MethodDelete, subsPath(pid, q.user)+"/"+sid, nil, nil); err != nil {
		return err
	}
	return redirect(w, q, noticeURL("/console/projects/"+pid, "subscriptionDeleted"))
}

func (c *Console) sendSubscription(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	_, err := q.do(q.ctx, http.MethodPost, subsPath(pid, q.user)+"/"+sid+"/send", nil, nil)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests {
		return redirect(w, q, noticeURL(consoleSub(pid, sid), "sentRecently", "wait", ae.Retry))
	}
	if err != nil {
		return err
	}
	return redirect(w, q, noticeURL(consoleSub(pid, sid), "sending"))
}

// setEnabled pauses or resumes a subscription: a PUT of it with enabled changed.
func (c *Console) setEnabled(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	s.Enabled = new(q.r.PostFormValue("enabled") == "true")
	s.Health = nil
	if _, err := q.do(q.ctx, http.MethodPut, subsPath(pid, q.user)+"/"+sid, wire.SubscriptionDoc{Subscription: s}, nil); err != nil {
		return err
	}
	key := "paused"
	if *s.Enabled {
		key = "resumed"
	}
	return redirect(w, q, noticeURL(consoleSub(pid, sid), key))
}

func (c *Console) preview(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	var out struct {
		Preview struct {
			Values      map[string]*float64 `json:"values"`
			Condition   bool                `json:"condition"`
			WouldSend   bool                `json:"wouldSend"`
			Resolved    bool                `json:"resolved"`
			Subject     string              `json:"subject"`
			Text        string              `json:"text"`
			Attachments []wire.Attachment   `json:"attachments"`
			Channels    []struct {
				Channel, Kind, To string
			} `json:"channels"`
			Recipient   string   `json:"recipient"`
			Description []string `json:"description"`
			Addresses   []string `json:"addresses"`
		} `json:"preview"`
	}
	path := subsPath(pid, q.user) + "/" + sid + "/preview"
	if who := q.r.URL.Query().Get("recipient"); who != "" {
		path += "?recipient=" + url.QueryEscape(who)
	}
	if _, err := q.do(q.ctx, http.MethodPost, path, nil, &out); err != nil {
		return err
	}
	reports, metrics, err := c.objects(q, pid)
	if err != nil {
		return err
	}
	a, err := c.audienceOf(q, pid, s)
	if err != nil {
		return err
	}
	c.render(w, q, http.StatusOK, "preview", map[string]any{"Title": "Preview: " + titleOf(s.Meta), "Sub": s, "ID": sid,
		"PID": pid, "P": out.Preview, "Names": mergeNames(reports, metrics), "A": a})
	return nil
}

// runFile downloads an attachment of a run through the API.
func (c *Console) runFile(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	path := subsPath(pid, q.user) + "/" + sid + "/runs/" + q.r.PathValue("rid") + "/attachments/" + q.r.PathValue("i")
	rec, err := q.do(q.ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return err
	}
	for _, h := range []string{"Content-Type", "Content-Disposition", "Content-Length"} {
		if v := rec.header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	_, err = w.Write(rec.body.Bytes())
	return err
}
