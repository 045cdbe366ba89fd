package webhook

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/engine/jexl"
)

// MaxTemplate is the longest body template, in bytes.
const MaxTemplate = 16 << 10

// TemplateVars are the variables a body template reads besides the
// metrics (f:executeMetric): the message's subject and text, the run's
// instant (RFC 3339, UTC; "" for a message no run made), the subscription's
// title and URI and the run's URI.
var TemplateVars = []string{"subject", "text", "instant", "subscription.title", "subscription.uri", "run.uri"}

// sample is the run a template is rendered against when it is saved: text
// with quotes, a backslash, a line break and markup, so that a template
// that quotes a value itself is found out.
var sample = map[string]string{
	"subject":            `Revenue alert "sample"`,
	"text":               "Revenue fell to 1,234.50\nin the \"West\" region \\ <b>&",
	"instant":            "2026-01-01T08:00:00Z",
	"subscription.title": "Revenue watch",
	"subscription.uri":   "/svc/projects/p/users/u/subscriptions/s",
	"run.uri":            "/svc/projects/p/users/u/subscriptions/s/runs/r",
}

// parseTemplate compiles a body template and renders it against a sample
// run, once with a value for every metric and once with none; its errors
// are *channels.FieldError on "template" that name the line and column.
func parseTemplate(src string) (*jexl.Template, error) {
	if len(src) > MaxTemplate {
		return nil, channels.Invalid("template", "must be at most %d bytes", MaxTemplate)
	}
	t, err := jexl.ParseTemplateVars(src, TemplateVars)
	if err != nil {
		return nil, templateError(src, "", err)
	}
	for _, v := range []float64{1234.5, math.NaN()} {
		values := make(map[string]float64, len(t.Metrics()))
		for _, uri := range t.Metrics() {
			values[uri] = v
		}
		if _, err := t.RenderJSON(values, sample); err != nil {
			when := ""
			if math.IsNaN(v) {
				when = "when a metric has no value, "
			}
			return nil, templateError(src, when, err)
		}
	}
	return t, nil
}

// templateError is err of template src as a *channels.FieldError naming
// the line and column.
func templateError(src, when string, err error) error {
	var e *jexl.Error
	if !errors.As(err, &e) {
		return channels.Invalid("template", "%s%v", when, err)
	}
	if e.Pos < 0 {
		return channels.Invalid("template", "%s%s", when, e.Msg)
	}
	line, col := jexl.LineColumn(src, e.Pos)
	return channels.Invalid("template", "line %d, column %d: %s%s", line, col, when, e.Msg)
}

// maxCachedTemplates bounds the templates a sender keeps compiled.
const maxCachedTemplates = 256

// templates keeps compiled body templates by their text.
type templates struct {
	mu sync.Mutex
	m  map[string]*jexl.Template
}

func (c *templates) get(src string) (*jexl.Template, error) {
	c.mu.Lock()
	t, ok := c.m[src]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	t, err := jexl.ParseTemplateVars(src, TemplateVars)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTemplates {
		c.m = make(map[string]*jexl.Template)
	}
	c.m[src] = t
	c.mu.Unlock()
	return t, nil
}

// templated is the body of m rendered by the channel's template. A metric
// the condition saw no value of, or one the subscription does not read, is
// null. A template that does not render will not on a retry either.
func (s *Sender) templated(m channels.Message, src string) ([]byte, error) {
	t, err := s.templates.get(src)
	if err != nil {
		return nil, channels.Permanent(fmt.Errorf("webhook: channel %s: template: %w", m.Channel.ID, err))
	}
	b, err := t.RenderJSON(templateValues(t, m.Source), TemplateValues(m))
	if err != nil {
		return nil, channels.Permanent(fmt.Errorf("webhook: channel %s: template: %w", m.Channel.ID, err))
	}
	return b, nil
}

func templateValues(t *jexl.Template, src channels.Source) map[string]float64 {
	values := make(map[string]float64, len(t.Metrics()))
	for _, uri := range t.Metrics() {
		values[uri] = math.NaN()
		if v := src.Values[uri]; v != nil {
			values[uri] = *v
		}
	}
	for _, uri := range t.Previous() {
		if v := src.Previous[uri]; v != nil {
			values[jexl.PreviousKey(uri)] = *v
		}
	}
	return values
}

// TemplateValues are the values of TemplateVars for m.
func TemplateValues(m channels.Message) map[string]string {
	src := m.Source
	vars := map[string]string{"subject": m.Subject, "text": m.Text, "instant": "",
		"subscription.title": src.SubscriptionTitle, "subscription.uri": src.Subscription, "run.uri": ""}
	if !src.Instant.IsZero() {
		vars["instant"] = src.Instant.UTC().Format(time.RFC3339)
	}
	if src.Subscription != "" && src.Run != "" {
		vars["run.uri"] = strings.TrimSuffix(src.Subscription, "/") + "/runs/" + src.Run
	}
	return vars
}
