package console

import (
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/engine/cron"
	"github.com/heraldhq/herald/wire"
)

// formats are the attachment formats a form offers.
var formats = []string{"PDF", "XLS", "CSV", "PNG"}

// subForm is the subscription form: its values, the pickers' choices and the
// API's errors at their fields.
type subForm struct {
	New         bool
	Action      string
	Cancel      string
	Title       string
	Triggers    []triggerRow
	Condition   string
	Subject     string
	Message     string
	MessageHTML string
	FireMode    string
	Enabled     bool
	Channels    []choice
	Attachments []attachRow
	Metrics     []entry
	Formats     []string
	Errors      map[string]string // form field name → what is wrong
	Error       string            // an error no field holds
}

type triggerRow struct {
	Cron, TZ, Words string
}

type choice struct {
	URI, Title, Kind string
	Checked          bool
}

type attachRow struct {
	Report  string
	Formats map[string]bool
	Reports []choice
}

// formOf fills the form from a subscription.
func (c *Console) formOf(q *req, pid string, s *wire.Subscription) (*subForm, error) {
	f := &subForm{Title: titleOf(s.Meta), Condition: conditionOf(s), Subject: s.Subject.Text(),
		Message: s.Message.Text(), MessageHTML: s.Message.HTMLText(), FireMode: str(s.FireMode), Enabled: isOn(s.Enabled),
		Formats: formats, Errors: map[string]string{}}
	for _, t := range s.Triggers {
		if t.TimerEvent != nil {
			f.Triggers = append(f.Triggers, triggerRow{Cron: str(t.TimerEvent.CronExpression), TZ: str(t.TimerEvent.Timezone)})
		}
	}
	f.Triggers = append(f.Triggers, triggerRow{}) // room for one more
	for i := range f.Triggers {
		f.Triggers[i].Words, _ = cron.Describe(f.Triggers[i].Cron)
	}
	chs, err := c.channelsOf(q)
	if err != nil {
		return nil, err
	}
	for _, ch := range chs {
		uri := ""
		if ch.Meta != nil {
			uri = ch.Meta.URI
		}
		f.Channels = append(f.Channels, choice{URI: uri, Title: titleOf(ch.Meta), Kind: c.kindTitle(ch),
			Checked: slices.Contains(s.Channels, uri)})
	}
	reports, metrics, err := c.objects(q, pid)
	if err != nil {
		return nil, err
	}
	f.Metrics = metrics
	rows := append(slices.Clone(s.Attachments), wire.Attachment{}) // room for one more
	for _, a := range rows {
		r := attachRow{Report: a.Report, Formats: map[string]bool{}}
		for _, x := range a.Formats {
			r.Formats[strings.ToUpper(x)] = true
		}
		if strings.EqualFold(strings.Join(a.Formats, ""), "XLSX") {
			r.Formats["XLS"] = true
		}
		for _, e := range reports {
			r.Reports = append(r.Reports, choice{URI: e.Link, Title: e.Title, Checked: e.Link == a.Report})
		}
		f.Attachments = append(f.Attachments, r)
	}
	return f, nil
}

// conditionOf is the text of a subscription's condition.
func conditionOf(s *wire.Subscription) string {
	if s.Condition == nil || s.Condition.Condition == nil {
		return ""
	}
	return str(s.Condition.Condition.Expression)
}

// readForm overwrites s with the posted form.
func readForm(r *http.Request, s *wire.Subscription) {
	v := r.PostForm
	if s.Meta == nil {
		s.Meta = &wire.Meta{}
	}
	s.Meta.Title = strings.TrimSpace(v.Get("title"))
	s.Triggers = nil
	for i := 0; i < 50; i++ {
		cronExpr, ok := v["trigger_cron_"+strconv.Itoa(i)]
		if !ok {
			break
		}
		if strings.TrimSpace(cronExpr[0]) == "" {
			continue
		}
		t := &wire.TimerEvent{CronExpression: new(strings.TrimSpace(cronExpr[0]))}
		if tz := strings.TrimSpace(v.Get("trigger_tz_" + strconv.Itoa(i))); tz != "" {
			t.Timezone = &tz // none: the service's default zone
		}
		s.Triggers = append(s.Triggers, wire.Trigger{TimerEvent: t})
	}
	s.Condition = &wire.Condition{Condition: &wire.Expression{Expression: new(v.Get("condition"))}}
	s.Message = wire.TextTemplate(v.Get("message"))
	if h := v.Get("message_html"); strings.TrimSpace(h) != "" {
		s.Message.HTML = &wire.Expression{Expression: &h}
	}
	s.Subject = nil
	if sub := v.Get("subject"); strings.TrimSpace(sub) != "" {
		s.Subject = wire.TextTemplate(sub)
	}
	s.FireMode = new(v.Get("fire_mode"))
	if *s.FireMode != "onChange" {
		s.ResolvedMessage = nil // the all-clear needs onChange
	}
	s.Enabled = new(v.Get("enabled") == "true")
	s.Channels = v["channels"]
	was := s.Attachments
	s.Attachments = nil
	for i := 0; i < 50; i++ {
		rep, ok := v["report_"+strconv.Itoa(i)]
		if !ok {
			break
		}
		if rep[0] == "" {
			continue
		}
		a := wire.Attachment{Report: rep[0], Formats: v["formats_"+strconv.Itoa(i)]}
		if i < len(was) && was[i].Report == a.Report {
			a.NewRowsBy = was[i].NewRowsBy // an API-only setting, kept while the report stays
		}
		s.Attachments = append(s.Attachments, a)
	}
	s.Health = nil
}

// fieldName maps an error's wire path to the form's field.
var fieldPaths = []struct {
	re    *regexp.Regexp
	field string // $1 is the index in the path
}{
	{regexp.MustCompile(`^subscription\.meta`), "title"},
	{regexp.MustCompile(`^subscription\.triggers\[(\d+)\]\.timerEvent\.timezone`), "trigger_tz_$1"},
	{regexp.MustCompile(`^subscription\.triggers\[(\d+)\]`), "trigger_cron_$1"},
	{regexp.MustCompile(`^subscription\.triggers`), "trigger_cron_0"},
	{regexp.MustCompile(`^subscription\.condition`), "condition"},
	{regexp.MustCompile(`^subscription\.message\.html`), "message_html"},
	{regexp.MustCompile(`^subscription\.message`), "message"},
	{regexp.MustCompile(`^subscription\.subject`), "subject"},
	{regexp.MustCompile(`^subscription\.resolvedMessage`), "fire_mode"},
	{regexp.MustCompile(`^subscription\.fireMode`), "fire_mode"},
	{regexp.MustCompile(`^subscription\.channels`), "channels"},
	{regexp.MustCompile(`^subscription\.pausedChannels`), "channels"},
	{regexp.MustCompile(`^subscription\.attachments\[(\d+)\]`), "report_$1"},
}

func fieldName(path string) string {
	for _, p := range fieldPaths {
		if m := p.re.FindStringSubmatch(path); m != nil {
			if len(m) > 1 {
				return strings.ReplaceAll(p.field, "$1", m[1])
			}
			return p.field
		}
	}
	return ""
}

// saveForm sends the form's subscription; on a refusal it shows the form
// again with the error at its field.
func (c *Console) saveForm(w http.ResponseWriter, q *req, pid string, s *wire.Subscription, method, path string, isNew bool) error {
	readForm(q.r, s)
	var doc wire.SubscriptionDoc
	_, err := q.do(q.ctx, method, path, wire.SubscriptionDoc{Subscription: s}, &doc)
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Status == http.StatusConflict) {
		f, ferr := c.formOf(q, pid, s)
		if ferr != nil {
			return ferr
		}
		f.New = isNew
		if name := fieldName(ae.Field); name != "" {
			f.Errors[name] = ae.Message
		} else {
			f.Error = ae.Message
		}
		return c.showForm(w, q, http.StatusBadRequest, pid, f, s)
	}
	if err != nil {
		return err
	}
	sid := subID(doc.Subscription)
	if sid == "" {
		sid = last(path)
	}
	return redirect(w, q, noticeURL(consoleSub(pid, sid), "saved"))
}

func (c *Console) showForm(w http.ResponseWriter, q *req, status int, pid string, f *subForm, s *wire.Subscription) error {
	p, err := c.project(q, pid)
	if err != nil {
		return err
	}
	title := "New subscription"
	f.Action, f.Cancel = "/console/projects/"+pid+"/subscriptions/new", "/console/projects/"+pid
	if !f.New {
		title = "Edit " + titleOf(s.Meta)
		f.Action, f.Cancel = consoleSub(pid, subID(s))+"/edit", consoleSub(pid, subID(s))
	}
	c.render(w, q, status, "form", map[string]any{"Title": title, "Project": p, "F": f})
	return nil
}

// blank is a new subscription's form values.
func blank() *wire.Subscription {
	return &wire.Subscription{
		Meta:      &wire.Meta{},
		Triggers:  []wire.Trigger{{TimerEvent: &wire.TimerEvent{CronExpression: new("0 0 8 * * MON-FRI"), Timezone: new("UTC")}}},
		Condition: &wire.Condition{Condition: &wire.Expression{Expression: new("true")}},
		FireMode:  new("always"), Enabled: new(true),
	}
}

func (c *Console) newSubscription(w http.ResponseWriter, q *req) error {
	pid := q.r.PathValue("pid")
	f, err := c.formOf(q, pid, blank())
	if err != nil {
		return err
	}
	f.New = true
	return c.showForm(w, q, http.StatusOK, pid, f, &wire.Subscription{})
}

func (c *Console) createSubscription(w http.ResponseWriter, q *req) error {
	pid := q.r.PathValue("pid")
	return c.saveForm(w, q, pid, blank(), http.MethodPost, subsPath(pid, q.user), true)
}

func (c *Console) editSubscription(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	f, err := c.formOf(q, pid, s)
	if err != nil {
		return err
	}
	return c.showForm(w, q, http.StatusOK, pid, f, s)
}

func (c *Console) updateSubscription(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	return c.saveForm(w, q, pid, s, http.MethodPut, subsPath(pid, q.user)+"/"+sid, false)
}

// cronWords describes a cron expression for the form's live description.
func (c *Console) cronWords(w http.ResponseWriter, q *req) error {
	words, err := cron.Describe(q.r.URL.Query().Get("expr"))
	if err != nil {
		words = err.Error()
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(words))
	return nil
}
