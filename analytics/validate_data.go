package analytics

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
)

// warehouseTables returns the tables of the project's warehouse by "schema.name".
func (c *checker) warehouseTables(ctx context.Context) (map[string]warehouse.TableInfo, error) {
	infos, err := c.s.wh.Tables(ctx, c.pid)
	if err != nil {
		return nil, err
	}
	out := make(map[string]warehouse.TableInfo, len(infos))
	for _, ti := range infos {
		out[ti.Schema+"."+ti.Name] = ti
	}
	return out, nil
}

// pdm checks that every table and column of the model is in the warehouse with its
// type, that the warehouse has no tables the model does not, and that every dataset is
// synchronized.
func (c *checker) pdm(ctx context.Context) error {
	have, err := c.warehouseTables(ctx)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, name := range sortedTables(c.m) {
		t := c.m.Tables[name]
		if t == nil {
			continue
		}
		info, ok := have[warehouse.SchemaMain+"."+name]
		used[warehouse.SchemaMain+"."+name] = true
		if !ok {
			c.add(CatMissingTable, LevelError, "table %s of dataset '%s' is missing from the warehouse", common(name), c.obj(t.Dataset))
			continue
		}
		for _, col := range t.Columns {
			full := common(name + "." + col.Name)
			got, ok := info.Column(col.Name)
			switch {
			case !ok:
				c.add(CatMissingColumn, LevelError, "column %s of dataset '%s' is missing from the warehouse", full, c.obj(t.Dataset))
			case got.Type != warehouse.SQLType(col.Type):
				c.add(CatType, LevelError, "column %s is %s in the warehouse, but the model declares %s",
					full, common(got.Type), common(warehouse.SQLType(col.Type)))
			}
			if !warehouse.HasLookup(col) {
				continue
			}
			lookup := warehouse.SchemaHerald + "." + warehouse.LookupName(name, col.Name)
			used[lookup] = true
			if _, ok := have[lookup]; !ok {
				c.add(CatMissingTable, LevelError, "the elements of key %s are missing from the warehouse", full)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(have)) {
		if !used[key] {
			c.add(CatOrphanTable, LevelWarn, "table %s is in the warehouse, but no dataset of the model has it", common(key))
		}
	}
	c.unsynchronized()
	return nil
}

// unsynchronized finds datasets whose table, as the model would lay it out now, is not
// the one last synchronized.
func (c *checker) unsynchronized() {
	m := c.m
	for _, id := range slices.Sorted(maps.Keys(m.Datasets)) {
		ds := m.Datasets[id]
		if ds == nil || ds.Date != "" || !complete(m, ds) {
			continue // the LDM check reports what is missing
		}
		layout, err := m.Layout(id)
		if err != nil {
			continue
		}
		old := m.Tables[ds.Table]
		if (layout == nil) != (old == nil) || (layout != nil && !sameTable(layout, old)) {
			c.add(CatUnsynced, LevelWarn, "dataset '%s' changed since its table was synchronized; SYNCHRONIZE it", c.obj(id))
		}
	}
}

// complete reports whether every object a dataset lists, and their labels, exist.
func complete(m *ldm.Model, ds *ldm.Dataset) bool {
	for _, a := range ds.Attributes {
		at := m.Attributes[a]
		if at == nil {
			return false
		}
		for _, l := range at.Labels {
			if m.Labels[l] == nil {
				return false
			}
		}
	}
	for _, f := range ds.Facts {
		if m.Facts[f] == nil {
			return false
		}
	}
	for _, at := range m.Attributes {
		if at == nil {
			return false
		}
	}
	return true
}

func sameTable(a, b *ldm.Table) bool {
	return a.Name == b.Name && a.Dataset == b.Dataset && a.Key == b.Key && a.ConnectionPoint == b.ConnectionPoint &&
		slices.Equal(a.Columns, b.Columns)
}

// io checks the data: every primary key is given once, and every reference finds its key.
func (c *checker) io(ctx context.Context) error {
	have, err := c.warehouseTables(ctx)
	if err != nil {
		return err
	}
	present := func(table, column string) bool {
		info, ok := have[warehouse.SchemaMain+"."+table]
		if ok {
			_, ok = info.Column(column)
		}
		return ok
	}
	for _, name := range sortedTables(c.m) {
		t := c.m.Tables[name]
		if t == nil {
			continue
		}
		if t.Key != "" && present(name, t.Key) {
			if err := c.checkKey(ctx, t); err != nil {
				return err
			}
		}
		for _, col := range t.Columns {
			if col.Role != ldm.RoleReference || !present(name, col.Name) {
				continue
			}
			a := c.m.Attributes[col.Object]
			if a == nil || a.DatePart != "" {
				continue
			}
			home, ok := a.HomeKey()
			if !ok || !present(home.Column.Table, home.Column.Name) {
				continue
			}
			n, example, err := c.s.wh.MissingReferences(ctx, c.pid, name, col.Name, home.Column.Table, home.Column.Name)
			if err != nil {
				return err
			}
			if n > 0 {
				c.add(CatForeignKey, LevelError, "%s rows of dataset '%s' reference %s values that dataset '%s' does not have, e.g. %s",
					count(n), c.obj(t.Dataset), common(name+"."+col.Name), c.obj(a.Dataset), common(example))
			}
		}
	}
	return nil
}

func (c *checker) checkKey(ctx context.Context, t *ldm.Table) error {
	kp, err := c.s.wh.CheckKey(ctx, c.pid, t.Name, t.Key)
	if err != nil {
		return err
	}
	key := common(t.Name + "." + t.Key)
	if kp.Nulls > 0 {
		c.add(CatNullKey, LevelError, "%s rows of dataset '%s' have no key %s", count(kp.Nulls), c.obj(t.Dataset), key)
	}
	if kp.Duplicates > 0 {
		c.add(CatDuplicateKey, LevelError, "key %s of dataset '%s' has %s values in more than one row, e.g. %s",
			key, c.obj(t.Dataset), count(kp.Duplicates), common(kp.Example))
	}
	return nil
}

func count(n int64) Par { return common(strconv.FormatInt(n, 10)) }
