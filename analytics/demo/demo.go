package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/heraldhq/herald/analytics"
)

// Spec is the demo's objects.json: the data files to load and the metrics and reports
// to create, in order. Objects are named by identifier.
type Spec struct {
	Loads   []Load   `json:"loads"`
	Metrics []Metric `json:"metrics"`
	Reports []Report `json:"reports"`
}

// Load loads a CSV file into a dataset.
type Load struct {
	Dataset string `json:"dataset"`
	File    string `json:"file"`
}

// Metric is a metric to create.
type Metric struct {
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	Expression string `json:"expression"`
	Format     string `json:"format"`
}

// Report is a report to create with its definition: labels in rows and columns (or
// "metricGroup"), metrics, and a chart type for a chart.
type Report struct {
	Identifier string   `json:"identifier"`
	Title      string   `json:"title"`
	Format     string   `json:"format"`
	Chart      string   `json:"chart"`
	Rows       []string `json:"rows"`
	Columns    []string `json:"columns"`
	Metrics    []string `json:"metrics"`
	Filters    []string `json:"filters"`
}

// Project is what Setup created: the URIs of the metrics and reports by identifier.
type Project struct {
	ID      string
	Metrics map[string]string
	Reports map[string]string
}

// Setup creates the demo in the empty project pid as user by: the model of model.maql,
// the data, and the metrics and reports of objects.json, all read from files.
func Setup(ctx context.Context, md *analytics.Service, files fs.FS, pid, by string) (*Project, error) {
	model, err := fs.ReadFile(files, "model.maql")
	if err != nil {
		return nil, err
	}
	if _, err := md.Manage(ctx, pid, by, string(model)); err != nil {
		return nil, fmt.Errorf("demo model: %w", err)
	}
	data, err := fs.ReadFile(files, "objects.json")
	if err != nil {
		return nil, err
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("demo objects.json: %w", err)
	}
	for _, l := range spec.Loads {
		if err := load(ctx, md, files, pid, l); err != nil {
			return nil, err
		}
	}
	p := &Project{ID: pid, Metrics: map[string]string{}, Reports: map[string]string{}}
	for _, m := range spec.Metrics {
		o, err := md.CreateObject(ctx, pid, by, analytics.Input{Identifier: m.Identifier, Title: m.Title,
			Metric: &analytics.MetricContent{Expression: m.Expression, Format: m.Format}})
		if err != nil {
			return nil, fmt.Errorf("demo metric %s: %w", m.Identifier, err)
		}
		p.Metrics[m.Identifier] = o.URI
	}
	for _, r := range spec.Reports {
		uri, err := report(ctx, md, pid, by, r)
		if err != nil {
			return nil, fmt.Errorf("demo report %s: %w", r.Identifier, err)
		}
		p.Reports[r.Identifier] = uri
	}
	return p, nil
}

func load(ctx context.Context, md *analytics.Service, files fs.FS, pid string, l Load) error {
	f, err := files.Open(l.File)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := md.Load(ctx, pid, l.Dataset, analytics.LoadFull, f); err != nil {
		return fmt.Errorf("demo data %s: %w", l.File, err)
	}
	return nil
}

// report creates a report definition and the report that shows it.
func report(ctx context.Context, md *analytics.Service, pid, by string, r Report) (string, error) {
	objs, _, err := md.Identifiers(ctx, pid, append(append(append([]string{}, r.Rows...), r.Columns...), r.Metrics...))
	if err != nil {
		return "", err
	}
	uris := map[string]string{}
	for _, o := range objs {
		uris[o.Identifier] = o.URI
	}
	items := func(ids []string) ([]analytics.GridItem, error) {
		out := []analytics.GridItem{}
		for _, id := range ids {
			switch {
			case id == "metricGroup":
				out = append(out, analytics.GridItem{MetricGroup: true})
			case uris[id] != "":
				out = append(out, analytics.GridItem{Attribute: &analytics.GridAttribute{URI: uris[id]}})
			default:
				return nil, fmt.Errorf("no object %s", id)
			}
		}
		return out, nil
	}
	def := analytics.ReportDefinitionContent{Format: r.Format, Filters: []analytics.Filter{}}
	if def.Grid.Rows, err = items(r.Rows); err != nil {
		return "", err
	}
	if def.Grid.Columns, err = items(r.Columns); err != nil {
		return "", err
	}
	for _, m := range r.Metrics {
		if uris[m] == "" {
			return "", fmt.Errorf("no metric %s", m)
		}
		def.Grid.Metrics = append(def.Grid.Metrics, analytics.GridMetric{URI: uris[m]})
	}
	for _, f := range r.Filters {
		def.Filters = append(def.Filters, analytics.Filter{Expression: f})
	}
	if r.Chart != "" {
		def.Chart, _ = json.Marshal(map[string]string{"type": r.Chart})
	}
	d, err := md.CreateObject(ctx, pid, by, analytics.Input{Identifier: r.Identifier + ".definition", Title: r.Title, ReportDefinition: &def})
	if err != nil {
		return "", err
	}
	o, err := md.CreateObject(ctx, pid, by, analytics.Input{Identifier: r.Identifier, Title: r.Title,
		Report: &analytics.ReportContent{Domains: []string{}, Definitions: []string{d.URI}}})
	if err != nil {
		return "", err
	}
	return o.URI, nil
}
