package ldm

import (
	"fmt"
	"maps"
	"slices"

	"github.com/heraldhq/herald/analytics/maql"
)

// drop applies DROP {id} [CASCADE]. CASCADE also drops what the object holds: a folder's
// membership, a dataset's objects, an attribute's labels and the references to it.
func (a *applier) drop(s maql.Drop) error {
	kind, ok := a.m.Kind(s.ID)
	if !ok {
		return fmt.Errorf("object {%s} does not exist", s.ID)
	}
	switch kind {
	case KindFolder:
		return a.dropFolder(s.ID, s.Cascade)
	case KindDataset:
		return a.dropDataset(s.ID, s.Cascade, false)
	case KindAttribute:
		if at := a.m.Attributes[s.ID]; at.DatePart != "" {
			return fmt.Errorf("attribute {%s} is part of the date dimension {%s}; drop the whole dimension with DROP ALL IN {%[2]s}", s.ID, at.Dataset)
		}
		return a.dropAttribute(s.ID, s.Cascade, s.Cascade)
	case KindLabel:
		if l := a.m.Labels[s.ID]; l.DateFormat != "" {
			return fmt.Errorf("the labels of a date dimension are fixed")
		}
		return a.dropLabel(s.ID)
	default:
		return a.dropFact(s.ID)
	}
}

// inUse fails when an object outside the model uses the object.
func (a *applier) inUse(kind Kind, id string) error {
	if a.opt.UsedBy == nil {
		return nil
	}
	if by := a.opt.UsedBy(id); by != "" {
		return fmt.Errorf("%s {%s} is used by %s", kindName(kind), id, by)
	}
	return nil
}

func (a *applier) dropFolder(id string, cascade bool) error {
	if err := a.inUse(KindFolder, id); err != nil {
		return err
	}
	var members []string
	for _, aid := range slices.Sorted(maps.Keys(a.m.Attributes)) {
		if a.m.Attributes[aid].Folder == id {
			members = append(members, aid)
		}
	}
	for _, fid := range slices.Sorted(maps.Keys(a.m.Facts)) {
		if a.m.Facts[fid].Folder == id {
			members = append(members, fid)
		}
	}
	if len(members) > 0 && !cascade {
		return fmt.Errorf("folder {%s} holds {%s}; DROP {%[1]s} CASCADE takes everything out of it", id, members[0])
	}
	for _, m := range members {
		if at := a.m.Attributes[m]; at != nil {
			at.Folder = ""
		} else {
			a.m.Facts[m].Folder = ""
		}
	}
	delete(a.m.Folders, id)
	return nil
}

// dropDataset drops the dataset and its table. Without allIn or cascade the dataset must
// be empty; without cascade no other dataset may reference its attributes.
func (a *applier) dropDataset(id string, cascade, allIn bool) error {
	ds := a.m.Datasets[id]
	if err := a.inUse(KindDataset, id); err != nil {
		return err
	}
	if !allIn && !cascade && len(ds.Attributes)+len(ds.Facts) > 0 {
		return fmt.Errorf("dataset {%s} is not empty; DROP {%[1]s} CASCADE or DROP ALL IN {%[1]s} drops it with its objects", id)
	}
	for _, attr := range slices.Clone(ds.Attributes) {
		if err := a.dropAttribute(attr, true, cascade); err != nil {
			return err
		}
	}
	for _, f := range slices.Clone(ds.Facts) {
		if err := a.dropFact(f); err != nil {
			return err
		}
	}
	if ds.Table != "" {
		a.dropTable(ds.Table)
	}
	delete(a.m.Datasets, id)
	return nil
}

// dropAttribute drops the attribute; labels and refs allow dropping its labels and its
// references from other tables with it.
func (a *applier) dropAttribute(id string, labels, refs bool) error {
	at := a.m.Attributes[id]
	if err := a.inUse(KindAttribute, id); err != nil {
		return err
	}
	if len(at.Labels) > 0 && !labels {
		return fmt.Errorf("attribute {%s} has labels ({%s}); DROP {%[1]s} CASCADE drops them too", id, at.Labels[0])
	}
	if r := at.References(); len(r) > 0 && !refs {
		return fmt.Errorf("attribute {%s} is referenced by %s; drop it with CASCADE to drop the reference too", id, r[0].Column)
	}
	for _, l := range slices.Clone(at.Labels) {
		if err := a.dropLabel(l); err != nil {
			return err
		}
	}
	a.leave(id)
	delete(a.m.Attributes, id)
	return nil
}

func (a *applier) dropLabel(id string) error {
	if err := a.inUse(KindLabel, id); err != nil {
		return err
	}
	l := a.m.Labels[id]
	if at := a.m.Attributes[l.Attribute]; at != nil {
		at.Labels = slices.DeleteFunc(at.Labels, func(s string) bool { return s == id })
		if at.DefaultLabel == id {
			at.DefaultLabel = ""
			if len(at.Labels) > 0 {
				at.DefaultLabel = at.Labels[0]
			}
		}
	}
	delete(a.m.Labels, id)
	return nil
}

func (a *applier) dropFact(id string) error {
	if err := a.inUse(KindFact, id); err != nil {
		return err
	}
	a.leave(id)
	delete(a.m.Facts, id)
	return nil
}
