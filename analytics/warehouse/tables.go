package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
)

// Tx is a write transaction on one project's database. Commit or Rollback must be called.
type Tx struct {
	conn    *sql.Conn
	cat     string
	release func()
	open    bool
}

// Begin starts a write transaction on the project's database.
func (w *Warehouse) Begin(ctx context.Context, pid string) (*Tx, error) {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return nil, err
	}
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		release()
		return nil, fmt.Errorf("warehouse begin: %w", err)
	}
	return &Tx{conn: c, cat: ident(catalog(pid)), release: release, open: true}, nil
}

// Commit commits the transaction.
func (t *Tx) Commit() error {
	if !t.open {
		return errors.New("warehouse: transaction already ended")
	}
	t.open = false
	defer t.release()
	if _, err := t.conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		_, _ = t.conn.ExecContext(context.Background(), "ROLLBACK")
		discard(t.conn)
		return fmt.Errorf("warehouse commit: %w", err)
	}
	return nil
}

// Rollback undoes the transaction; after Commit it does nothing.
func (t *Tx) Rollback() error {
	if !t.open {
		return nil
	}
	t.open = false
	defer t.release()
	if _, err := t.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		discard(t.conn)
		return fmt.Errorf("warehouse rollback: %w", err)
	}
	return nil
}

// Apply runs the steps of a script. A step that fails is a *ldm.StmtError at the step's
// statement.
func (t *Tx) Apply(ctx context.Context, steps []ldm.Step) error {
	for _, s := range steps {
		var err error
		switch {
		case s.New == nil:
			err = t.dropTable(ctx, s.Old)
		case s.Old == nil || !s.Preserve:
			err = t.createTable(ctx, s.Old, s.New)
		default:
			err = t.alterTable(ctx, s.Old, s.New)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &ldm.StmtError{Pos: s.Pos, Msg: err.Error()}
		}
	}
	return nil
}

func (t *Tx) exec(ctx context.Context, query string, args ...any) error {
	if _, err := t.conn.ExecContext(ctx, query, args...); err != nil {
		return errors.New(firstLine(err))
	}
	return nil
}

// table is the qualified name of a dataset's table.
func (t *Tx) table(name string) string { return t.cat + ".main." + ident(name) }

// lookup is the qualified name of the element lookup of a key column.
func (t *Tx) lookup(table, column string) string { return lookupName(t.cat, table, column) }

func lookupName(cat, table, column string) string {
	return cat + ".herald." + ident(table+"."+column)
}

// sqlType is the DuckDB type of a column type. VARCHAR lengths are checked on load.
func sqlType(t ldm.Type) string {
	switch t.Name {
	case maql.TypeInt:
		return "INTEGER"
	case maql.TypeVarchar:
		return "VARCHAR"
	case maql.TypeDecimal:
		return "DECIMAL(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")"
	}
	return t.Name // BIGINT, DOUBLE, DATE
}

func (t *Tx) dropTable(ctx context.Context, old *ldm.Table) error {
	if err := t.exec(ctx, "DROP TABLE IF EXISTS "+t.table(old.Name)); err != nil {
		return fmt.Errorf("dropping table %s: %s", old.Name, err)
	}
	for _, c := range old.Columns {
		if hasLookup(c) {
			if err := t.exec(ctx, "DROP TABLE IF EXISTS "+t.lookup(old.Name, c.Name)); err != nil {
				return fmt.Errorf("dropping the elements of %s.%s: %s", old.Name, c.Name, err)
			}
		}
	}
	return nil
}

// createTable (re)creates an empty table, and empty lookups of its keys.
func (t *Tx) createTable(ctx context.Context, old, table *ldm.Table) error {
	if old != nil {
		if err := t.dropTable(ctx, old); err != nil {
			return err
		}
	}
	if err := t.exec(ctx, "DROP TABLE IF EXISTS "+t.table(table.Name)); err != nil {
		return fmt.Errorf("replacing table %s: %s", table.Name, err)
	}
	defs := make([]string, len(table.Columns))
	for i, c := range table.Columns {
		defs[i] = ident(c.Name) + " " + sqlType(c.Type)
	}
	if err := t.exec(ctx, "CREATE TABLE "+t.table(table.Name)+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return fmt.Errorf("creating table %s: %s", table.Name, err)
	}
	for _, c := range table.Columns {
		if hasLookup(c) {
			if err := t.createLookup(ctx, table.Name, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasLookup reports whether the column is a key whose element ids come from a lookup: a
// key of a type other than INT and BIGINT, whose values are the element ids themselves.
func hasLookup(c ldm.TableColumn) bool {
	return c.Role == ldm.RoleKey && !integer(c.Type)
}

func integer(t ldm.Type) bool { return t.Name == maql.TypeInt || t.Name == maql.TypeBigint }

func (t *Tx) createLookup(ctx context.Context, table string, c ldm.TableColumn) error {
	lk := t.lookup(table, c.Name)
	if err := t.exec(ctx, "DROP TABLE IF EXISTS "+lk); err != nil {
		return fmt.Errorf("replacing the elements of %s.%s: %s", table, c.Name, err)
	}
	if err := t.exec(ctx, "CREATE TABLE "+lk+" (id BIGINT NOT NULL, key "+sqlType(c.Type)+" NOT NULL)"); err != nil {
		return fmt.Errorf("creating the elements of %s.%s: %s", table, c.Name, err)
	}
	return nil
}

// fillLookup gives an element id to every key value of the column that has none yet,
// numbering new values in key order after the largest id.
func (t *Tx) fillLookup(ctx context.Context, table, column string) error {
	lk, col := t.lookup(table, column), ident(column)
	err := t.exec(ctx, "INSERT INTO "+lk+" SELECT (SELECT coalesce(max(id), 0) FROM "+lk+") + row_number() OVER (ORDER BY k), k "+
		"FROM (SELECT DISTINCT "+col+" AS k FROM "+t.table(table)+" s WHERE "+col+" IS NOT NULL "+
		"AND NOT EXISTS (SELECT 1 FROM "+lk+" l WHERE l.key = s."+col+"))")
	if err != nil {
		return fmt.Errorf("numbering the elements of %s.%s: %s", table, column, err)
	}
	return nil
}

// alterTable changes a table to a new layout keeping its rows: new columns are empty,
// dropped columns go, and changed types convert the values.
func (t *Tx) alterTable(ctx context.Context, old, table *ldm.Table) error {
	name := t.table(table.Name)
	for _, c := range table.Columns {
		if _, ok := old.Column(c.Name); !ok {
			if err := t.exec(ctx, "ALTER TABLE "+name+" ADD COLUMN "+ident(c.Name)+" "+sqlType(c.Type)); err != nil {
				return fmt.Errorf("adding column %s.%s: %s", table.Name, c.Name, err)
			}
		}
	}
	for _, c := range old.Columns {
		if _, ok := table.Column(c.Name); !ok {
			if err := t.exec(ctx, "ALTER TABLE "+name+" DROP COLUMN "+ident(c.Name)); err != nil {
				return fmt.Errorf("dropping column %s.%s: %s", table.Name, c.Name, err)
			}
		}
	}
	for _, c := range table.Columns {
		prev, ok := old.Column(c.Name)
		if !ok || sqlType(prev.Type) == sqlType(c.Type) {
			continue
		}
		if err := t.exec(ctx, "ALTER TABLE "+name+" ALTER COLUMN "+ident(c.Name)+" SET DATA TYPE "+sqlType(c.Type)); err != nil {
			return fmt.Errorf("converting column %s.%s to %s: %s", table.Name, c.Name, c.Type, err)
		}
	}
	if err := t.checkLengths(ctx, table); err != nil {
		return err
	}
	return t.alterLookups(ctx, old, table)
}

// checkLengths fails when a text value is longer than its column's VARCHAR length.
func (t *Tx) checkLengths(ctx context.Context, table *ldm.Table) error {
	for _, c := range table.Columns {
		if c.Type.Name != maql.TypeVarchar {
			continue
		}
		var n int64
		err := t.conn.QueryRowContext(ctx, "SELECT count(*) FROM "+t.table(table.Name)+" WHERE length("+ident(c.Name)+") > ?",
			c.Type.Length).Scan(&n)
		if err != nil {
			return fmt.Errorf("checking column %s.%s: %s", table.Name, c.Name, firstLine(err))
		}
		if n > 0 {
			return fmt.Errorf("column %s.%s has %d values longer than %s allows", table.Name, c.Name, n, c.Type)
		}
	}
	return nil
}

// alterLookups drops the lookups of columns that no longer need one and creates and fills
// those of columns that now do.
func (t *Tx) alterLookups(ctx context.Context, old, table *ldm.Table) error {
	for _, c := range old.Columns {
		if now, ok := table.Column(c.Name); hasLookup(c) && (!ok || !hasLookup(now)) {
			if err := t.exec(ctx, "DROP TABLE IF EXISTS "+t.lookup(old.Name, c.Name)); err != nil {
				return fmt.Errorf("dropping the elements of %s.%s: %s", old.Name, c.Name, err)
			}
		}
	}
	for _, c := range table.Columns {
		if !hasLookup(c) {
			continue
		}
		prev, ok := old.Column(c.Name)
		switch {
		case !ok || !hasLookup(prev):
			if err := t.createLookup(ctx, table.Name, c); err != nil {
				return err
			}
			if err := t.fillLookup(ctx, table.Name, c.Name); err != nil {
				return err
			}
		case sqlType(prev.Type) != sqlType(c.Type):
			lk := t.lookup(table.Name, c.Name)
			if err := t.exec(ctx, "ALTER TABLE "+lk+" ALTER COLUMN key SET DATA TYPE "+sqlType(c.Type)); err != nil {
				return fmt.Errorf("converting the elements of %s.%s: %s", table.Name, c.Name, err)
			}
		}
	}
	return nil
}
