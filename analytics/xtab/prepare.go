package xtab

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/analytics/query"
)

// Source is what to execute: exactly one of a report (its current definition), a report
// definition, or a definition's content given inline.
type Source struct {
	Report     string
	Definition string
	Content    *analytics.ReportDefinitionContent
	// ContentField is where Content sits in the request, for errors. Default FieldContent.
	ContentField string
	// Title names the result of Content, as a stored definition's title does; "" gives the
	// name an inline definition gets.
	Title string
}

// Request fields of the sources, as errors name them.
const (
	FieldReport     = "report_req.report"
	FieldDefinition = "report_req.reportDefinition"
	FieldContent    = "report_req.definitionContent.content"
)

// definition is a report definition to execute.
type definition struct {
	content analytics.ReportDefinitionContent
	uri     string // empty for an inline one
	title   string
	field   string // the request field errors in the content are reported under
}

// resolve finds the definition a source names.
func (e *Executor) resolve(ctx context.Context, pid string, src Source) (definition, error) {
	switch {
	case src.Content != nil:
		c, err := e.md.CheckReportDefinition(ctx, pid, *src.Content)
		base := cmp.Or(src.ContentField, FieldContent)
		var in *analytics.InputError
		if errors.As(err, &in) {
			field := base
			if rest, ok := strings.CutPrefix(in.Field, analytics.CategoryReportDefinition+".content"); ok {
				field += rest
			}
			return definition{}, &analytics.InputError{Field: field, Msg: in.Msg}
		}
		return definition{content: c, field: base, title: src.Title}, err
	case src.Report != "":
		o, err := e.object(ctx, pid, src.Report, FieldReport, analytics.CategoryReport)
		if err != nil {
			return definition{}, err
		}
		var rc analytics.ReportContent
		if err := json.Unmarshal(o.Content, &rc); err != nil || len(rc.Definitions) == 0 {
			return definition{}, &analytics.InputError{Field: FieldReport, Msg: "the report has no report definition"}
		}
		d, err := e.stored(ctx, pid, rc.Definitions[len(rc.Definitions)-1], FieldReport)
		d.title = o.Title
		return d, err
	default:
		return e.stored(ctx, pid, src.Definition, FieldDefinition)
	}
}

// stored reads a stored report definition.
func (e *Executor) stored(ctx context.Context, pid, uri, field string) (definition, error) {
	o, err := e.object(ctx, pid, uri, field, analytics.CategoryReportDefinition)
	if err != nil {
		return definition{}, err
	}
	d := definition{uri: o.URI, title: o.Title, field: field}
	if err := json.Unmarshal(o.Content, &d.content); err != nil {
		return definition{}, fmt.Errorf("report definition %s: %w", uri, err)
	}
	return d, nil
}

// object reads an object of the project that must be of the category.
func (e *Executor) object(ctx context.Context, pid, uri, field, category string) (analytics.Object, error) {
	id, ok := objectID(pid, uri)
	if !ok {
		return analytics.Object{}, &analytics.InputError{Field: field, Msg: "must be an object URI of project " + pid + ", /svc/md/" + pid + "/obj/<id>"}
	}
	o, err := e.md.Object(ctx, pid, id)
	if err != nil {
		return analytics.Object{}, err
	}
	if o.Category != category {
		return analytics.Object{}, &analytics.InputError{Field: field, Msg: fmt.Sprintf("%s is a %s, not a %s", uri, o.Category, category)}
	}
	return o, nil
}

// objectID returns the id of an object URI of the project.
func objectID(pid, uri string) (int64, bool) {
	rest, ok := strings.CutPrefix(uri, "/svc/md/"+pid+"/obj/")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0 && !strings.HasPrefix(rest, "+")
}

// catalog is what the objects of a report are: for the compiler, and their titles and
// formats for people.
type catalog struct {
	objects map[string]query.Object
	titles  map[string]string
	formats map[string]string
	ids     map[string]int64
}

// gather reads the objects the URIs name and, through metrics, those they use.
func (e *Executor) gather(ctx context.Context, pid string, uris []string) (*catalog, error) {
	c := &catalog{objects: map[string]query.Object{}, titles: map[string]string{}, formats: map[string]string{}, ids: map[string]int64{}}
	for len(uris) > 0 {
		uri := uris[len(uris)-1]
		uris = uris[:len(uris)-1]
		if _, seen := c.objects[uri]; seen {
			continue
		}
		id, ok := objectID(pid, uri)
		if !ok {
			return nil, &analytics.NotFoundError{Kind: "object", ID: uri}
		}
		o, err := e.md.Object(ctx, pid, id)
		if err != nil {
			return nil, err
		}
		qo := query.Object{Category: o.Category, Identifier: o.Identifier}
		if o.Category == analytics.CategoryMetric {
			var mc analytics.MetricContent
			if err := json.Unmarshal(o.Content, &mc); err != nil {
				return nil, fmt.Errorf("metric %s: %w", uri, err)
			}
			if qo.Metric, err = maql.ParseMetric(mc.Expression); err != nil {
				return nil, fmt.Errorf("metric %s: %w", uri, err)
			}
			for _, r := range qo.Metric.Refs() {
				uris = append(uris, r.URI)
			}
			c.formats[uri] = mc.Format
		}
		c.objects[uri], c.titles[uri], c.ids[uri] = qo, o.Title, id
	}
	return c, nil
}
