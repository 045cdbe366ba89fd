package ldm

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/heraldhq/herald/analytics/maql"
)

// StmtError is a statement of a script that cannot be applied to the model.
type StmtError struct {
	Pos maql.Pos
	Msg string
}

func (e *StmtError) Error() string { return fmt.Sprintf("line %d: %s", e.Pos.Line, e.Msg) }

// Options tell Apply about the metadata objects outside the model.
type Options struct {
	// Reserved reports whether an identifier is taken by an object outside the model, such
	// as a metric. Nil: none is.
	Reserved func(identifier string) bool
	// UsedBy describes the objects outside the model that use the model object, e.g.
	// `metric "Revenue" (/svc/md/p/obj/12)`, or returns "" when none does. An object in use
	// cannot be dropped. Nil: none is used.
	UsedBy func(identifier string) string
}

// Step is a change of one warehouse table that a script asks for, in script order.
// Old is the table as last synchronized (nil: it does not exist yet) and New the table to
// have (nil: drop it). Preserve keeps the rows of an existing table, converting them to the
// new layout; otherwise the table is emptied.
type Step struct {
	Pos      maql.Pos
	Old, New *Table
	Preserve bool
}

// Apply applies the statements to a copy of m, in order, and returns the new model and the
// warehouse steps. m is not changed. The first statement that cannot be applied stops it
// with a *StmtError naming the statement's line.
func Apply(m *Model, stmts []maql.Stmt, opt Options) (*Model, []Step, error) {
	a := &applier{m: m.Clone(), opt: opt}
	for _, s := range stmts {
		a.pos = s.Position()
		if err := a.apply(s); err != nil {
			return nil, nil, &StmtError{Pos: a.pos, Msg: err.Error()}
		}
	}
	return a.m, a.steps, nil
}

type applier struct {
	m     *Model
	opt   Options
	pos   maql.Pos
	steps []Step
}

func (a *applier) apply(s maql.Stmt) error {
	switch s := s.(type) {
	case maql.CreateFolder:
		return a.createFolder(s)
	case maql.CreateDataset:
		return a.createDataset(s)
	case maql.IncludeTemplate:
		return a.includeTemplate(s)
	case maql.CreateAttribute:
		return a.createAttribute(s)
	case maql.CreateFact:
		return a.createFact(s)
	case maql.AlterDatasetAdd:
		return a.alterDatasetAdd(s)
	case maql.AlterDatasetDrop:
		return a.alterDatasetDrop(s)
	case maql.AddLabels:
		return a.addLabels(s)
	case maql.AlterLabels:
		return a.alterLabels(s)
	case maql.DefaultLabel:
		return a.defaultLabel(s)
	case maql.AddKeys:
		at, err := a.attribute(s.Attribute)
		if err != nil {
			return err
		}
		return a.addKeys(at, s.Keys)
	case maql.AlterDatatype:
		return a.alterDatatype(s)
	case maql.Synchronize:
		return a.synchronize(s)
	case maql.Drop:
		return a.drop(s)
	case maql.DropAllIn:
		if _, err := a.dataset(s.Dataset); err != nil {
			return err
		}
		return a.dropDataset(s.Dataset, s.Cascade, true)
	}
	return fmt.Errorf("statement %s is not supported", s)
}

func kindName(k Kind) string {
	if k == KindLabel {
		return "label"
	}
	return string(k)
}

func withArticle(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// missing explains that id is not an object of the wanted kind.
func (a *applier) missing(kind Kind, id string) error {
	if k, ok := a.m.Kind(id); ok {
		return fmt.Errorf("{%s} is %s, not %s", id, withArticle(kindName(k)), withArticle(kindName(kind)))
	}
	return fmt.Errorf("%s {%s} does not exist", kindName(kind), id)
}

func (a *applier) dataset(id string) (*Dataset, error) {
	if ds := a.m.Datasets[id]; ds != nil {
		return ds, nil
	}
	return nil, a.missing(KindDataset, id)
}

func (a *applier) attribute(id string) (*Attribute, error) {
	if at := a.m.Attributes[id]; at != nil {
		return at, nil
	}
	return nil, a.missing(KindAttribute, id)
}

// free fails when the identifier is taken.
func (a *applier) free(id string) error {
	if k, ok := a.m.Kind(id); ok {
		return fmt.Errorf("%s {%s} already exists", kindName(k), id)
	}
	if a.opt.Reserved != nil && a.opt.Reserved(id) {
		return fmt.Errorf("identifier {%s} is taken by another object of the project", id)
	}
	return nil
}

// setMeta applies the options of VISUAL(...) other than FOLDER.
func setMeta(m *Meta, v maql.Visual) error {
	if v.Title != nil {
		if *v.Title == "" || utf8.RuneCountInString(*v.Title) > 255 {
			return fmt.Errorf("TITLE must have 1 to 255 characters")
		}
		m.Title = *v.Title
	}
	if v.Description != nil {
		m.Description = *v.Description
	}
	if v.Tags != nil {
		m.Tags = *v.Tags
	}
	return nil
}

func newMeta(v maql.Visual, id string) (Meta, error) {
	m := Meta{Title: id}
	return m, setMeta(&m, v)
}

func noFolder(v maql.Visual, what string) error {
	if v.Folder != nil {
		return fmt.Errorf("%s cannot be in a folder", what)
	}
	return nil
}

// folderOf returns the folder VISUAL(FOLDER ...) names, checking that it holds the kind.
func (a *applier) folderOf(v maql.Visual, want maql.FolderType) (string, error) {
	if v.Folder == nil {
		return "", nil
	}
	f := a.m.Folders[*v.Folder]
	if f == nil {
		return "", a.missing(KindFolder, *v.Folder)
	}
	if f.Type != want {
		return "", fmt.Errorf("folder {%s} is TYPE %s; this object needs a TYPE %s folder", *v.Folder, f.Type, want)
	}
	return *v.Folder, nil
}

func (a *applier) createFolder(s maql.CreateFolder) error {
	if err := a.free(s.ID); err != nil {
		return err
	}
	if err := noFolder(s.Visual, "a folder"); err != nil {
		return err
	}
	meta, err := newMeta(s.Visual, s.ID)
	if err != nil {
		return err
	}
	a.m.Folders[s.ID] = &Folder{Meta: meta, Type: s.Type}
	return nil
}

func (a *applier) createDataset(s maql.CreateDataset) error {
	if err := a.free(s.ID); err != nil {
		return err
	}
	if err := noFolder(s.Visual, "a dataset"); err != nil {
		return err
	}
	meta, err := newMeta(s.Visual, s.ID)
	if err != nil {
		return err
	}
	a.m.Datasets[s.ID] = &Dataset{Meta: meta}
	return nil
}

func (a *applier) createAttribute(s maql.CreateAttribute) error {
	if err := a.free(s.ID); err != nil {
		return err
	}
	folder, err := a.folderOf(s.Visual, maql.FolderAttribute)
	if err != nil {
		return err
	}
	meta, err := newMeta(s.Visual, s.ID)
	if err != nil {
		return err
	}
	at := &Attribute{Meta: meta, Folder: folder}
	a.m.Attributes[s.ID] = at
	return a.addKeys(at, s.Keys)
}

func (a *applier) createFact(s maql.CreateFact) error {
	if err := a.free(s.ID); err != nil {
		return err
	}
	folder, err := a.folderOf(s.Visual, maql.FolderFact)
	if err != nil {
		return err
	}
	meta, err := newMeta(s.Visual, s.ID)
	if err != nil {
		return err
	}
	col := columnOf(s.Column)
	if err := a.unused(col); err != nil {
		return err
	}
	a.m.Facts[s.ID] = &Fact{Meta: meta, Folder: folder, Column: col}
	return nil
}

// addKeys adds keys to an attribute: the first key of an attribute is its own, any other
// is a reference from another dataset's table.
func (a *applier) addKeys(at *Attribute, keys []maql.Key) error {
	for _, k := range keys {
		col := columnOf(k.Column)
		switch {
		case at.DatePart != "" && at.DatePart != "date":
			return fmt.Errorf("only the date attribute of a date dimension takes keys; this one is its %s", at.DatePart)
		case at.DatePart != "" && k.Fullset:
			return fmt.Errorf("key %s references a date dimension; it cannot be FULLSET", col)
		case k.Fullset && len(at.Keys) > 0:
			return fmt.Errorf("key %s cannot be FULLSET: only an attribute's first key can", col)
		}
		for _, have := range at.Keys {
			if have.Column.Table == col.Table {
				return fmt.Errorf("the attribute already has key %s in table %s", have.Column, col.Table)
			}
		}
		if err := a.unused(col); err != nil {
			return err
		}
		at.Keys = append(at.Keys, Key{Column: col, Fullset: k.Fullset})
	}
	return nil
}

// unused fails when the column is not a valid new column or already holds something.
func (a *applier) unused(col Column) error {
	if col.Name == "rowid" {
		return fmt.Errorf("column %s: rowid is a reserved name", col)
	}
	if role, obj := a.m.columnRole(col); role != "" {
		return fmt.Errorf("column %s is already used by {%s}", col, obj)
	}
	return nil
}

func (a *applier) alterDatasetAdd(s maql.AlterDatasetAdd) error {
	ds, err := a.dataset(s.Dataset)
	if err != nil {
		return err
	}
	if ds.Date != "" {
		return fmt.Errorf("the date dimension {%s} cannot be changed", s.Dataset)
	}
	for _, id := range s.Objects {
		var table string
		var member *string
		switch {
		case a.m.Attributes[id] != nil:
			at := a.m.Attributes[id]
			home, ok := at.HomeKey()
			if !ok {
				return fmt.Errorf("attribute {%s} has no key to keep in the dataset's table", id)
			}
			table, member = home.Column.Table, &at.Dataset
		case a.m.Facts[id] != nil:
			f := a.m.Facts[id]
			table, member = f.Column.Table, &f.Dataset
		default:
			if k, ok := a.m.Kind(id); ok {
				return fmt.Errorf("{%s} is a %s; a dataset holds attributes and facts", id, kindName(k))
			}
			return fmt.Errorf("attribute or fact {%s} does not exist", id)
		}
		if *member != "" {
			return fmt.Errorf("{%s} is already in dataset {%s}", id, *member)
		}
		if err := a.claim(s.Dataset, ds, table, id); err != nil {
			return err
		}
		*member = s.Dataset
		if a.m.Attributes[id] != nil {
			ds.Attributes = append(ds.Attributes, id)
		} else {
			ds.Facts = append(ds.Facts, id)
		}
	}
	return nil
}

// claim makes table the dataset's table, or checks that it is.
func (a *applier) claim(dsID string, ds *Dataset, table, obj string) error {
	if ds.Table == table {
		return nil
	}
	if ds.Table != "" {
		return fmt.Errorf("{%s} has its column in table %s, but dataset {%s} keeps its data in table %s", obj, table, dsID, ds.Table)
	}
	if owner := a.m.TableOwner(table); owner != "" && owner != dsID {
		return fmt.Errorf("table %s belongs to dataset {%s}", table, owner)
	}
	ds.Table = table
	return nil
}

func (a *applier) alterDatasetDrop(s maql.AlterDatasetDrop) error {
	if _, err := a.dataset(s.Dataset); err != nil {
		return err
	}
	for _, id := range s.Objects {
		var member string
		switch {
		case a.m.Attributes[id] != nil:
			member = a.m.Attributes[id].Dataset
		case a.m.Facts[id] != nil:
			member = a.m.Facts[id].Dataset
		}
		if member != s.Dataset {
			return fmt.Errorf("{%s} is not in dataset {%s}", id, s.Dataset)
		}
		a.leave(id)
	}
	return nil
}

// leave takes an attribute or fact out of its dataset. A dataset left empty and never
// synchronized forgets its table.
func (a *applier) leave(id string) {
	var dsID string
	if at := a.m.Attributes[id]; at != nil {
		dsID, at.Dataset = at.Dataset, ""
	} else if f := a.m.Facts[id]; f != nil {
		dsID, f.Dataset = f.Dataset, ""
	}
	ds := a.m.Datasets[dsID]
	if ds == nil {
		return
	}
	ds.Attributes = slices.DeleteFunc(ds.Attributes, func(s string) bool { return s == id })
	ds.Facts = slices.DeleteFunc(ds.Facts, func(s string) bool { return s == id })
	if len(ds.Attributes)+len(ds.Facts) == 0 && ds.Date == "" && a.m.Tables[ds.Table] == nil {
		ds.Table = ""
	}
}

func (a *applier) addLabels(s maql.AddLabels) error {
	at, err := a.attribute(s.Attribute)
	if err != nil {
		return err
	}
	if at.DatePart != "" {
		return fmt.Errorf("the labels of a date dimension are fixed")
	}
	home, ok := at.HomeKey()
	if !ok {
		return fmt.Errorf("attribute {%s} has no key; its labels belong in its key's table", s.Attribute)
	}
	for _, l := range s.Labels {
		if err := a.free(l.ID); err != nil {
			return err
		}
		if err := noFolder(l.Visual, "a label"); err != nil {
			return err
		}
		col := columnOf(l.Column)
		if col.Table != home.Column.Table {
			return fmt.Errorf("label {%s} must be in table %s, beside the key %s of its attribute", l.ID, home.Column.Table, home.Column)
		}
		if err := a.unused(col); err != nil {
			return err
		}
		meta, err := newMeta(l.Visual, l.ID)
		if err != nil {
			return err
		}
		a.m.Labels[l.ID] = &Label{Meta: meta, Attribute: s.Attribute, Column: col}
		at.Labels = append(at.Labels, l.ID)
		if at.DefaultLabel == "" {
			at.DefaultLabel = l.ID
		}
	}
	return nil
}

// label returns a label of the attribute.
func (a *applier) label(attr, id string) (*Label, error) {
	l := a.m.Labels[id]
	if l == nil {
		return nil, a.missing(KindLabel, id)
	}
	if l.Attribute != attr {
		return nil, fmt.Errorf("label {%s} is a label of {%s}, not of {%s}", id, l.Attribute, attr)
	}
	return l, nil
}

func (a *applier) alterLabels(s maql.AlterLabels) error {
	if _, err := a.attribute(s.Attribute); err != nil {
		return err
	}
	for _, lv := range s.Labels {
		l, err := a.label(s.Attribute, lv.ID)
		if err != nil {
			return err
		}
		if err := noFolder(lv.Visual, "a label"); err != nil {
			return err
		}
		if err := setMeta(&l.Meta, lv.Visual); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) defaultLabel(s maql.DefaultLabel) error {
	at, err := a.attribute(s.Attribute)
	if err != nil {
		return err
	}
	if _, err := a.label(s.Attribute, s.Label); err != nil {
		return err
	}
	at.DefaultLabel = s.Label
	return nil
}

func (a *applier) alterDatatype(s maql.AlterDatatype) error {
	col := columnOf(s.Column)
	typ := Type{s.Type}
	role, obj := a.m.columnRole(col)
	switch role {
	case "":
		return fmt.Errorf("column %s is not used by any attribute, label or fact", col)
	case RoleReference:
		return fmt.Errorf("column %s references {%s}; its type follows the key it references", col, obj)
	case RoleKey:
		if typ.Name == maql.TypeDouble {
			return fmt.Errorf("key %s of {%s} cannot be DOUBLE", col, obj)
		}
	case RoleFact:
		if !typ.Numeric() {
			return fmt.Errorf("fact {%s} must be numeric: INT, BIGINT, DOUBLE or DECIMAL(p,s), not %s", obj, typ)
		}
	}
	a.m.Types[col.Table+"."+col.Name] = typ
	return nil
}

func (a *applier) synchronize(s maql.Synchronize) error {
	for _, id := range s.Datasets {
		ds, err := a.dataset(id)
		if err != nil {
			return err
		}
		if ds.Date != "" {
			continue // a date dimension has no table
		}
		layout, err := a.m.Layout(id)
		if err != nil {
			return err
		}
		old := a.m.Tables[ds.Table]
		if layout == nil {
			if old != nil {
				a.dropTable(ds.Table)
				ds.Table = ""
			}
			continue
		}
		a.steps = append(a.steps, Step{Pos: a.pos, Old: old, New: layout, Preserve: s.PreserveData})
		a.m.Tables[layout.Name] = layout
	}
	return nil
}

// dropTable asks for the synchronized table to be dropped.
func (a *applier) dropTable(name string) {
	if old := a.m.Tables[name]; old != nil {
		a.steps = append(a.steps, Step{Pos: a.pos, Old: old})
		delete(a.m.Tables, name)
	}
}
