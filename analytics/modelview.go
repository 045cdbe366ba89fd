package analytics

import (
	"context"
	"maps"
	"slices"

	"github.com/heraldhq/herald/analytics/ldm"
)

// ModelView is a project's logical data model in the shape of the platform's
// projectModel: its datasets with their attributes, labels, facts and the datasets they
// reference, and its date dimensions. Everything is in identifier order.
type ModelView struct {
	Datasets       []DatasetView       `json:"datasets"`
	DateDimensions []DateDimensionView `json:"dateDimensions"`
}

// DatasetView is {"dataset":{...}}.
type DatasetView struct {
	Dataset DatasetBody `json:"dataset"`
}

// DatasetBody is a dataset of the view. Anchor is the attribute whose key is the
// dataset's primary key; References are the identifiers of the datasets (and date
// dimensions) whose keys the dataset's table holds.
type DatasetBody struct {
	Identifier string          `json:"identifier"`
	Title      string          `json:"title"`
	Anchor     *AttributeView  `json:"anchor,omitempty"`
	Attributes []AttributeView `json:"attributes"`
	Facts      []FactView      `json:"facts"`
	References []string        `json:"references"`
}

// AttributeView is {"attribute":{...}}.
type AttributeView struct {
	Attribute AttributeBody `json:"attribute"`
}

// AttributeBody is an attribute of the view with its labels.
type AttributeBody struct {
	Identifier   string      `json:"identifier"`
	Title        string      `json:"title"`
	Labels       []LabelView `json:"labels"`
	DefaultLabel string      `json:"defaultLabel,omitempty"`
}

// LabelView is {"label":{...}}.
type LabelView struct {
	Label NamedBody `json:"label"`
}

// FactView is {"fact":{...}}.
type FactView struct {
	Fact NamedBody `json:"fact"`
}

// NamedBody is an object of the view with only its identifier and title.
type NamedBody struct {
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
}

// DateDimensionView is {"dateDimension":{...}}: Name is the identifier prefix of the
// date dimension's objects.
type DateDimensionView struct {
	DateDimension struct {
		Name  string `json:"name"`
		Title string `json:"title"`
	} `json:"dateDimension"`
}

// ModelView returns the project's data model as a ModelView.
func (s *Service) ModelView(ctx context.Context, pid string) (ModelView, error) {
	m, err := s.Model(ctx, pid)
	if err != nil {
		return ModelView{}, err
	}
	return viewOf(m), nil
}

func viewOf(m *ldm.Model) ModelView {
	v := ModelView{Datasets: []DatasetView{}, DateDimensions: []DateDimensionView{}}
	refs := datasetReferences(m)
	for _, id := range slices.Sorted(maps.Keys(m.Datasets)) {
		ds := m.Datasets[id]
		if ds.Date != "" {
			var d DateDimensionView
			d.DateDimension.Name, d.DateDimension.Title = ds.Date, ds.Title
			v.DateDimensions = append(v.DateDimensions, d)
			continue
		}
		body := DatasetBody{Identifier: id, Title: ds.Title, Attributes: []AttributeView{}, Facts: []FactView{},
			References: refs[id]}
		anchor, _ := m.ConnectionPoint(id)
		for _, a := range ds.Attributes {
			av := attributeView(m, a)
			if a == anchor {
				body.Anchor = &av
				continue
			}
			body.Attributes = append(body.Attributes, av)
		}
		for _, f := range ds.Facts {
			body.Facts = append(body.Facts, FactView{Fact: NamedBody{Identifier: f, Title: m.Facts[f].Title}})
		}
		v.Datasets = append(v.Datasets, DatasetView{Dataset: body})
	}
	return v
}

func attributeView(m *ldm.Model, id string) AttributeView {
	a := m.Attributes[id]
	body := AttributeBody{Identifier: id, Title: a.Title, Labels: []LabelView{}, DefaultLabel: a.DefaultLabel}
	for _, l := range a.Labels {
		body.Labels = append(body.Labels, LabelView{Label: NamedBody{Identifier: l, Title: m.Labels[l].Title}})
	}
	return AttributeView{Attribute: body}
}

// datasetReferences maps each dataset to the datasets whose attributes have keys in its table:
// a date dimension by its name, any other dataset by its identifier.
func datasetReferences(m *ldm.Model) map[string][]string {
	byTable := map[string]string{}
	for id, ds := range m.Datasets {
		if ds.Table != "" {
			byTable[ds.Table] = id
		}
	}
	sets := map[string]map[string]bool{}
	for _, a := range m.Attributes {
		target := m.Datasets[a.Dataset]
		if target == nil {
			continue
		}
		name := a.Dataset
		if target.Date != "" {
			name = target.Date
		}
		for _, k := range a.References() {
			from, ok := byTable[k.Column.Table]
			if !ok || from == a.Dataset {
				continue
			}
			if sets[from] == nil {
				sets[from] = map[string]bool{}
			}
			sets[from][name] = true
		}
	}
	out := map[string][]string{}
	for id := range m.Datasets {
		out[id] = slices.Sorted(maps.Keys(sets[id]))
		if out[id] == nil {
			out[id] = []string{}
		}
	}
	return out
}
