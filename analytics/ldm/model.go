package ldm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/heraldhq/herald/analytics/maql"
)

// Kind is the kind of a model object; the values are the categories of the metadata
// objects that stand for them.
type Kind string

// Kinds of model objects.
const (
	KindFolder    Kind = "folder"
	KindDataset   Kind = "dataset"
	KindAttribute Kind = "attribute"
	KindLabel     Kind = "attributeDisplayForm"
	KindFact      Kind = "fact"
)

// Kinds lists every kind of model object.
var Kinds = []Kind{KindFolder, KindDataset, KindAttribute, KindLabel, KindFact}

// Meta is what VISUAL(...) sets on an object.
type Meta struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Tags        string `json:"tags,omitempty"`
}

// Column is a physical column, {table.column}, in lower case.
type Column struct {
	Table string `json:"table"`
	Name  string `json:"name"`
}

func (c Column) String() string { return "{" + c.Table + "." + c.Name + "}" }

// IsZero reports whether c names no column.
func (c Column) IsZero() bool { return c.Table == "" && c.Name == "" }

// columnOf canonicalizes a column of the script.
func columnOf(c maql.Column) Column {
	return Column{Table: strings.ToLower(c.Table), Name: strings.ToLower(c.Name)}
}

// Key is a key column of an attribute. An attribute's first key is its own (home) key,
// in the table of its dataset; its other keys are references from other datasets' tables.
type Key struct {
	Column  Column `json:"column"`
	Fullset bool   `json:"fullset,omitempty"`
}

// Folder groups attributes or facts for people.
type Folder struct {
	Meta
	Type maql.FolderType `json:"type"`
}

// Dataset is a set of attributes and facts kept in one table.
type Dataset struct {
	Meta
	// Table is the dataset's table: set when its first object is added, empty for a date
	// dimension.
	Table string `json:"table,omitempty"`
	// Date is the template identifier of a date dimension, empty for other datasets.
	Date       string   `json:"date,omitempty"`
	Attributes []string `json:"attributes,omitempty"`
	Facts      []string `json:"facts,omitempty"`
}

// Attribute is a dimension to slice by: its elements are the distinct values of its key.
type Attribute struct {
	Meta
	Folder       string   `json:"folder,omitempty"`
	Dataset      string   `json:"dataset,omitempty"`
	Keys         []Key    `json:"keys,omitempty"`
	Labels       []string `json:"labels,omitempty"`
	DefaultLabel string   `json:"defaultLabel,omitempty"`
	// DatePart is the part of a date an attribute of a date dimension stands for (a
	// DatePart name); empty for other attributes.
	DatePart string `json:"datePart,omitempty"`
}

// HomeKey returns the attribute's own key, its first one.
func (a *Attribute) HomeKey() (Key, bool) {
	if a.DatePart != "" || len(a.Keys) == 0 {
		return Key{}, false
	}
	return a.Keys[0], true
}

// References returns the keys of the attribute in other datasets' tables.
func (a *Attribute) References() []Key {
	if a.DatePart != "" {
		return a.Keys
	}
	if len(a.Keys) < 2 {
		return nil
	}
	return a.Keys[1:]
}

// Label is a way to show an attribute's elements: a text column beside the key.
type Label struct {
	Meta
	Attribute string `json:"attribute"`
	// Column holds the label's values; zero for a label of a date dimension.
	Column Column `json:"column,omitzero"`
	// DateFormat is the format of a label of a date dimension (a DateLabel format).
	DateFormat string `json:"dateFormat,omitempty"`
}

// Fact is a numeric column to aggregate.
type Fact struct {
	Meta
	Folder  string `json:"folder,omitempty"`
	Dataset string `json:"dataset,omitempty"`
	Column  Column `json:"column"`
}

// Model is the logical data model of one project, with the physical layout of its tables
// as they were last synchronized. Objects are keyed by identifier.
type Model struct {
	Folders    map[string]*Folder    `json:"folders,omitempty"`
	Datasets   map[string]*Dataset   `json:"datasets,omitempty"`
	Attributes map[string]*Attribute `json:"attributes,omitempty"`
	Labels     map[string]*Label     `json:"labels,omitempty"`
	Facts      map[string]*Fact      `json:"facts,omitempty"`
	// Types are the column types set by ALTER DATATYPE, keyed by "table.column".
	Types map[string]Type `json:"types,omitempty"`
	// Tables are the warehouse's tables as last synchronized, keyed by name.
	Tables map[string]*Table `json:"tables,omitempty"`
}

// New returns an empty model.
func New() *Model {
	return &Model{
		Folders: map[string]*Folder{}, Datasets: map[string]*Dataset{}, Attributes: map[string]*Attribute{},
		Labels: map[string]*Label{}, Facts: map[string]*Fact{}, Types: map[string]Type{}, Tables: map[string]*Table{},
	}
}

// Decode reads a model written by json.Marshal; empty data is an empty model.
func Decode(data []byte) (*Model, error) {
	m := New()
	if len(data) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("decode model: %w", err)
	}
	// Absent maps decode as nil; keep them usable.
	n := New()
	if m.Folders == nil {
		m.Folders = n.Folders
	}
	if m.Datasets == nil {
		m.Datasets = n.Datasets
	}
	if m.Attributes == nil {
		m.Attributes = n.Attributes
	}
	if m.Labels == nil {
		m.Labels = n.Labels
	}
	if m.Facts == nil {
		m.Facts = n.Facts
	}
	if m.Types == nil {
		m.Types = n.Types
	}
	if m.Tables == nil {
		m.Tables = n.Tables
	}
	return m, nil
}

// Clone returns a deep copy of m.
func (m *Model) Clone() *Model {
	c := New()
	for id, f := range m.Folders {
		cp := *f
		c.Folders[id] = &cp
	}
	for id, d := range m.Datasets {
		cp := *d
		cp.Attributes, cp.Facts = slices.Clone(d.Attributes), slices.Clone(d.Facts)
		c.Datasets[id] = &cp
	}
	for id, a := range m.Attributes {
		cp := *a
		cp.Keys, cp.Labels = slices.Clone(a.Keys), slices.Clone(a.Labels)
		c.Attributes[id] = &cp
	}
	for id, l := range m.Labels {
		cp := *l
		c.Labels[id] = &cp
	}
	for id, f := range m.Facts {
		cp := *f
		c.Facts[id] = &cp
	}
	maps.Copy(c.Types, m.Types)
	for name, t := range m.Tables {
		cp := *t
		cp.Columns = slices.Clone(t.Columns)
		c.Tables[name] = &cp
	}
	return c
}

// Kind returns the kind of the object with the identifier.
func (m *Model) Kind(id string) (Kind, bool) {
	switch {
	case m.Folders[id] != nil:
		return KindFolder, true
	case m.Datasets[id] != nil:
		return KindDataset, true
	case m.Attributes[id] != nil:
		return KindAttribute, true
	case m.Labels[id] != nil:
		return KindLabel, true
	case m.Facts[id] != nil:
		return KindFact, true
	}
	return "", false
}

// Meta returns the meta of the object with the identifier.
func (m *Model) Meta(id string) (Meta, bool) {
	switch {
	case m.Folders[id] != nil:
		return m.Folders[id].Meta, true
	case m.Datasets[id] != nil:
		return m.Datasets[id].Meta, true
	case m.Attributes[id] != nil:
		return m.Attributes[id].Meta, true
	case m.Labels[id] != nil:
		return m.Labels[id].Meta, true
	case m.Facts[id] != nil:
		return m.Facts[id].Meta, true
	}
	return Meta{}, false
}

// ConnectionPoint returns the dataset's connection point: its first attribute whose home
// key is FULLSET. Its key is the table's primary key, the one other datasets reference.
func (m *Model) ConnectionPoint(dataset string) (string, bool) {
	ds := m.Datasets[dataset]
	if ds == nil {
		return "", false
	}
	if ds.Date != "" {
		return ds.Date + ".date", true
	}
	for _, id := range ds.Attributes {
		if k, ok := m.Attributes[id].HomeKey(); ok && k.Fullset {
			return id, true
		}
	}
	return "", false
}

// Object is one object of the model as the metadata store lists it.
type Object struct {
	Identifier string
	Kind       Kind
	Meta       Meta
}

// Objects lists every object of the model, by kind and then by identifier.
func (m *Model) Objects() []Object {
	var out []Object
	add := func(kind Kind, ids []string) {
		slices.Sort(ids)
		for _, id := range ids {
			meta, _ := m.Meta(id)
			out = append(out, Object{Identifier: id, Kind: kind, Meta: meta})
		}
	}
	add(KindFolder, slices.Collect(maps.Keys(m.Folders)))
	add(KindDataset, slices.Collect(maps.Keys(m.Datasets)))
	add(KindAttribute, slices.Collect(maps.Keys(m.Attributes)))
	add(KindLabel, slices.Collect(maps.Keys(m.Labels)))
	add(KindFact, slices.Collect(maps.Keys(m.Facts)))
	return out
}

// Dependency says that object From uses object To.
type Dependency struct {
	From, To string
}

// Dependencies lists the uses between objects of the model: a label uses its attribute,
// attributes and facts use their dataset and folder, and a dataset uses the attributes it
// references.
func (m *Model) Dependencies() []Dependency {
	var out []Dependency
	for id, l := range m.Labels {
		out = append(out, Dependency{id, l.Attribute})
	}
	for id, a := range m.Attributes {
		if a.Dataset != "" {
			out = append(out, Dependency{id, a.Dataset})
		}
		if a.Folder != "" {
			out = append(out, Dependency{id, a.Folder})
		}
		for _, k := range a.References() {
			if ds := m.TableOwner(k.Column.Table); ds != "" {
				out = append(out, Dependency{ds, id})
			}
		}
	}
	for id, f := range m.Facts {
		if f.Dataset != "" {
			out = append(out, Dependency{id, f.Dataset})
		}
		if f.Folder != "" {
			out = append(out, Dependency{id, f.Folder})
		}
	}
	slices.SortFunc(out, func(a, b Dependency) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	return slices.Compact(out)
}

// TableOwner returns the dataset whose table is named table, or "".
func (m *Model) TableOwner(table string) string {
	for id, ds := range m.Datasets {
		if ds.Table == table {
			return id
		}
	}
	if t := m.Tables[table]; t != nil {
		return t.Dataset
	}
	return ""
}

// Check verifies that every reference between the objects of m resolves. Apply keeps
// models valid; Check is for loading stored models and for tests.
func (m *Model) Check() error {
	for id, a := range m.Attributes {
		if a.Dataset != "" && (m.Datasets[a.Dataset] == nil || !slices.Contains(m.Datasets[a.Dataset].Attributes, id)) {
			return fmt.Errorf("attribute %s: not in its dataset %s", id, a.Dataset)
		}
		if a.Folder != "" && m.Folders[a.Folder] == nil {
			return fmt.Errorf("attribute %s: folder %s does not exist", id, a.Folder)
		}
		for _, l := range a.Labels {
			if m.Labels[l] == nil || m.Labels[l].Attribute != id {
				return fmt.Errorf("attribute %s: label %s is not its own", id, l)
			}
		}
		if (a.DefaultLabel == "") != (len(a.Labels) == 0) || (a.DefaultLabel != "" && !slices.Contains(a.Labels, a.DefaultLabel)) {
			return fmt.Errorf("attribute %s: default label %q is not one of its labels", id, a.DefaultLabel)
		}
	}
	for id, l := range m.Labels {
		if a := m.Attributes[l.Attribute]; a == nil || !slices.Contains(a.Labels, id) {
			return fmt.Errorf("label %s: attribute %s does not list it", id, l.Attribute)
		}
	}
	for id, f := range m.Facts {
		if f.Dataset != "" && (m.Datasets[f.Dataset] == nil || !slices.Contains(m.Datasets[f.Dataset].Facts, id)) {
			return fmt.Errorf("fact %s: not in its dataset %s", id, f.Dataset)
		}
		if f.Folder != "" && m.Folders[f.Folder] == nil {
			return fmt.Errorf("fact %s: folder %s does not exist", id, f.Folder)
		}
	}
	for id, ds := range m.Datasets {
		for _, a := range ds.Attributes {
			if m.Attributes[a] == nil || m.Attributes[a].Dataset != id {
				return fmt.Errorf("dataset %s: attribute %s is not in it", id, a)
			}
		}
		for _, f := range ds.Facts {
			if m.Facts[f] == nil || m.Facts[f].Dataset != id {
				return fmt.Errorf("dataset %s: fact %s is not in it", id, f)
			}
		}
	}
	for name, t := range m.Tables {
		if t.Name != name || m.Datasets[t.Dataset] == nil || m.Datasets[t.Dataset].Table != name {
			return fmt.Errorf("table %s: dataset %s does not own it", name, t.Dataset)
		}
	}
	return nil
}
