package ldm

import (
	"fmt"
	"maps"
	"slices"
)

// Role is what a column of a table holds.
type Role string

// Column roles.
const (
	RoleKey       Role = "key"       // the key of an attribute of the dataset
	RoleLabel     Role = "label"     // a label of an attribute of the dataset
	RoleFact      Role = "fact"      // a fact of the dataset
	RoleReference Role = "reference" // the key of an attribute of another dataset, or a date
)

// Table is the physical layout of a dataset's table.
type Table struct {
	Name    string `json:"name"`
	Dataset string `json:"dataset"`
	// ConnectionPoint is the dataset's connection point and Key its column, the table's
	// primary key; both are empty when the dataset has none.
	ConnectionPoint string        `json:"connectionPoint,omitempty"`
	Key             string        `json:"key,omitempty"`
	Columns         []TableColumn `json:"columns"`
}

// TableColumn is one column of a table.
type TableColumn struct {
	Name string `json:"name"`
	Type Type   `json:"type"`
	Role Role   `json:"role"`
	// Object is the identifier of what the column holds: the attribute of a key or of a
	// reference, the label, or the fact.
	Object string `json:"object"`
}

// Column returns the column called name.
func (t *Table) Column(name string) (TableColumn, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return TableColumn{}, false
}

// typeOf returns the column's type set by ALTER DATATYPE, or def.
func (m *Model) typeOf(c Column, def Type) Type {
	if t, ok := m.Types[c.Table+"."+c.Name]; ok {
		return t
	}
	return def
}

// columnRole returns what the column holds in the model and for which object, or "".
func (m *Model) columnRole(c Column) (Role, string) {
	for id, at := range m.Attributes {
		for i, k := range at.Keys {
			if k.Column == c {
				if i == 0 && at.DatePart == "" {
					return RoleKey, id
				}
				return RoleReference, id
			}
		}
	}
	for id, l := range m.Labels {
		if l.Column == c {
			return RoleLabel, id
		}
	}
	for id, f := range m.Facts {
		if f.Column == c {
			return RoleFact, id
		}
	}
	return "", ""
}

// Layout computes the table the dataset has in the model: the keys and labels of its
// attributes, its facts, then the references to other datasets' connection points and to
// date dimensions. It is nil for a date dimension and for a dataset with no objects.
func (m *Model) Layout(dataset string) (*Table, error) {
	ds := m.Datasets[dataset]
	if ds == nil || ds.Date != "" || ds.Table == "" {
		return nil, nil
	}
	t := &Table{Name: ds.Table, Dataset: dataset}
	users := map[string]string{}
	add := func(col Column, typ Type, role Role, obj string) error {
		if prev, ok := users[col.Name]; ok {
			return fmt.Errorf("column %s is used by both {%s} and {%s}", col, prev, obj)
		}
		users[col.Name] = obj
		t.Columns = append(t.Columns, TableColumn{Name: col.Name, Type: typ, Role: role, Object: obj})
		return nil
	}
	for _, id := range ds.Attributes {
		at := m.Attributes[id]
		home, _ := at.HomeKey()
		if err := add(home.Column, m.typeOf(home.Column, DefaultKeyType), RoleKey, id); err != nil {
			return nil, err
		}
		if home.Fullset && t.ConnectionPoint == "" {
			t.ConnectionPoint, t.Key = id, home.Column.Name
		}
		for _, l := range at.Labels {
			col := m.Labels[l].Column
			if err := add(col, m.typeOf(col, DefaultLabelType), RoleLabel, l); err != nil {
				return nil, err
			}
		}
	}
	for _, id := range ds.Facts {
		col := m.Facts[id].Column
		if err := add(col, m.typeOf(col, DefaultFactType), RoleFact, id); err != nil {
			return nil, err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.Attributes)) {
		at := m.Attributes[id]
		if home, ok := at.HomeKey(); ok && home.Column.Table == t.Name && at.Dataset != dataset {
			return nil, fmt.Errorf("attribute {%s} has its key %s in table %s but is not in dataset {%s}", id, home.Column, t.Name, dataset)
		}
		for _, k := range at.References() {
			if k.Column.Table != t.Name {
				continue
			}
			typ, err := m.referenceType(id, k.Column)
			if err != nil {
				return nil, err
			}
			if err := add(k.Column, typ, RoleReference, id); err != nil {
				return nil, err
			}
		}
	}
	if len(t.Columns) == 0 {
		return nil, nil
	}
	return t, nil
}

// referenceType returns the type of a reference column to the attribute id: a date, or
// the type of the key of the dataset's connection point it must be.
func (m *Model) referenceType(id string, col Column) (Type, error) {
	at := m.Attributes[id]
	if at.DatePart != "" {
		return DateType, nil
	}
	if cp, ok := m.ConnectionPoint(at.Dataset); !ok || cp != id {
		return Type{}, fmt.Errorf("%s is a key of {%s}, which is not the connection point (the FULLSET key) of a dataset", col, id)
	}
	home, _ := at.HomeKey()
	return m.typeOf(home.Column, DefaultKeyType), nil
}
