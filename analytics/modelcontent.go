package analytics

import (
	"maps"
	"slices"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
)

// column is a physical column in the content of model objects.
type column struct {
	Data string `json:"data"` // table.column
	Type string `json:"type"` // "col"
}

func columnOf(c ldm.Column) column { return column{Data: c.Table + "." + c.Name, Type: "col"} }

// datasetContent is the content of a dataset object.
type datasetContent struct {
	Attributes []string `json:"attributes"`
	Facts      []string `json:"facts"`
	// Table is the dataset's table; empty for a date dimension.
	Table string `json:"table,omitempty"`
	// DateDimension is the identifier prefix of a date dimension.
	DateDimension string `json:"dateDimension,omitempty"`
	// ConnectionPoint is the URI of the attribute whose key is the table's primary key.
	ConnectionPoint string `json:"connectionPoint,omitempty"`
	// Synchronized is the table as the warehouse has it, nil before the first SYNCHRONIZE.
	Synchronized *tableContent `json:"synchronized,omitempty"`
}

type tableContent struct {
	Name    string          `json:"name"`
	Columns []columnContent `json:"columns"`
}

type columnContent struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Role   string `json:"role"`
	Object string `json:"object,omitempty"` // URI
}

type attributeContent struct {
	Dimension          string   `json:"dimension,omitempty"` // dataset URI
	DisplayForms       []string `json:"displayForms"`
	DefaultDisplayForm string   `json:"defaultDisplayForm,omitempty"`
	PK                 []column `json:"pk"`
	FK                 []column `json:"fk"`
	Folder             string   `json:"folder,omitempty"`
	// Type is GDC.time.<part> for an attribute of a date dimension.
	Type string `json:"type,omitempty"`
}

type labelContent struct {
	FormOf     string  `json:"formOf"` // attribute URI
	Expression *column `json:"expression,omitempty"`
	Default    int     `json:"default"`
	// DateFormat is the format of a label of a date dimension.
	DateFormat string `json:"dateFormat,omitempty"`
}

type factContent struct {
	Expr    []column `json:"expr"`
	Dataset string   `json:"dataset,omitempty"`
	Folder  string   `json:"folder,omitempty"`
}

type folderContent struct {
	Type    string   `json:"type"`
	Entries []string `json:"entries"`
}

// modelContent renders the content of a model object from the model.
func modelContent(pid string, pm *projectModel, category, ident string) any {
	r := contentRenderer{pid: pid, pm: pm, m: pm.model}
	var c any
	switch ldm.Kind(category) {
	case ldm.KindDataset:
		c = r.dataset(ident)
	case ldm.KindAttribute:
		c = r.attribute(ident)
	case ldm.KindLabel:
		c = r.label(ident)
	case ldm.KindFact:
		c = r.fact(ident)
	case ldm.KindFolder:
		c = r.folder(ident)
	}
	if c == nil {
		return struct{}{}
	}
	return c
}

type contentRenderer struct {
	pid string
	pm  *projectModel
	m   *ldm.Model
}

func (r contentRenderer) uri(id string) string {
	if n, ok := r.pm.ids[id]; ok && id != "" {
		return ObjectURI(r.pid, n)
	}
	return ""
}

func (r contentRenderer) uris(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, r.uri(id))
	}
	return out
}

func (r contentRenderer) dataset(ident string) any {
	ds := r.m.Datasets[ident]
	if ds == nil {
		return nil
	}
	c := datasetContent{Attributes: r.uris(ds.Attributes), Facts: r.uris(ds.Facts), Table: ds.Table, DateDimension: ds.Date}
	if cp, ok := r.m.ConnectionPoint(ident); ok {
		c.ConnectionPoint = r.uri(cp)
	}
	if t := r.m.Tables[ds.Table]; t != nil && ds.Table != "" {
		c.Synchronized = &tableContent{Name: t.Name}
		for _, col := range t.Columns {
			c.Synchronized.Columns = append(c.Synchronized.Columns, columnContent{
				Name: col.Name, Type: col.Type.String(), Role: string(col.Role), Object: r.uri(col.Object)})
		}
	}
	return c
}

func (r contentRenderer) attribute(ident string) any {
	a := r.m.Attributes[ident]
	if a == nil {
		return nil
	}
	c := attributeContent{Dimension: r.uri(a.Dataset), DisplayForms: r.uris(a.Labels), DefaultDisplayForm: r.uri(a.DefaultLabel),
		PK: []column{}, FK: []column{}, Folder: r.uri(a.Folder)}
	if home, ok := a.HomeKey(); ok {
		c.PK = append(c.PK, columnOf(home.Column))
	}
	for _, k := range a.References() {
		c.FK = append(c.FK, columnOf(k.Column))
	}
	if a.DatePart != "" {
		c.Type = "GDC.time." + a.DatePart
	}
	return c
}

func (r contentRenderer) label(ident string) any {
	l := r.m.Labels[ident]
	if l == nil {
		return nil
	}
	c := labelContent{FormOf: r.uri(l.Attribute), DateFormat: l.DateFormat}
	if !l.Column.IsZero() {
		col := columnOf(l.Column)
		c.Expression = &col
	}
	if a := r.m.Attributes[l.Attribute]; a != nil && a.DefaultLabel == ident {
		c.Default = 1
	}
	return c
}

func (r contentRenderer) fact(ident string) any {
	f := r.m.Facts[ident]
	if f == nil {
		return nil
	}
	return factContent{Expr: []column{columnOf(f.Column)}, Dataset: r.uri(f.Dataset), Folder: r.uri(f.Folder)}
}

func (r contentRenderer) folder(ident string) any {
	f := r.m.Folders[ident]
	if f == nil {
		return nil
	}
	entries := []string{}
	for _, id := range slices.Sorted(maps.Keys(r.m.Attributes)) {
		if r.m.Attributes[id].Folder == ident {
			entries = append(entries, r.uri(id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.m.Facts)) {
		if r.m.Facts[id].Folder == ident {
			entries = append(entries, r.uri(id))
		}
	}
	return folderContent{Type: strings.ToLower(string(f.Type)), Entries: entries}
}
