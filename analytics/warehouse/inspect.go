package warehouse

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/heraldhq/herald/analytics/ldm"
)

// TableInfo is a table as the project's database has it.
type TableInfo struct {
	Schema  string // SchemaMain or SchemaHerald
	Name    string
	Columns []ColumnInfo
}

// ColumnInfo is a column as the project's database has it; Type is DuckDB's name of its
// type, as SQLType gives it.
type ColumnInfo struct {
	Name string
	Type string
}

// Column returns the column called name.
func (t TableInfo) Column(name string) (ColumnInfo, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return ColumnInfo{}, false
}

// SQLType is the DuckDB type the warehouse gives a column of the type.
func SQLType(t ldm.Type) string { return sqlType(t) }

// LookupName is the name, in SchemaHerald, of the element lookup of a key column.
func LookupName(table, column string) string { return table + "." + column }

// HasLookup reports whether a column is a key whose element ids come from a lookup.
func HasLookup(c ldm.TableColumn) bool { return hasLookup(c) }

// Tables lists the tables of the project's database with their columns, by schema and name.
func (w *Warehouse) Tables(ctx context.Context, pid string) ([]TableInfo, error) {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := c.QueryContext(ctx, "SELECT c.schema_name, c.table_name, c.column_name, c.data_type FROM duckdb_columns() c "+
		"WHERE c.database_name = ? AND c.schema_name IN (?, ?) "+
		"ORDER BY c.schema_name, c.table_name, c.column_index", catalog(pid), SchemaMain, SchemaHerald)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []TableInfo
	for rows.Next() {
		var schema, table string
		var col ColumnInfo
		if err := rows.Scan(&schema, &table, &col.Name, &col.Type); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if n := len(out); n == 0 || out[n-1].Schema != schema || out[n-1].Name != table {
			out = append(out, TableInfo{Schema: schema, Name: table})
		}
		out[len(out)-1].Columns = append(out[len(out)-1].Columns, col)
	}
	return out, rows.Err()
}

// KeyProblems are what is wrong with the values of a primary key.
type KeyProblems struct {
	Nulls int64 // rows without a key
	// Duplicates is how many key values occur in more than one row; Example is one of them.
	Duplicates int64
	Example    string
}

// CheckKey counts the rows of a dataset's table without a value in the key column, and
// the values that occur in more than one row.
func (w *Warehouse) CheckKey(ctx context.Context, pid, table, column string) (KeyProblems, error) {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return KeyProblems{}, err
	}
	defer release()
	t, k := ident(catalog(pid))+".main."+ident(table), ident(column)
	var p KeyProblems
	if err := c.QueryRowContext(ctx, "SELECT count(*) - count("+k+") FROM "+t).Scan(&p.Nulls); err != nil {
		return p, fmt.Errorf("check key %s.%s: %s", table, column, firstLine(err))
	}
	var example sql.NullString
	err = c.QueryRowContext(ctx, "SELECT count(*), min(v) FROM (SELECT CAST("+k+" AS VARCHAR) AS v FROM "+t+
		" WHERE "+k+" IS NOT NULL GROUP BY "+k+" HAVING count(*) > 1)").Scan(&p.Duplicates, &example)
	if err != nil {
		return p, fmt.Errorf("check key %s.%s: %s", table, column, firstLine(err))
	}
	p.Example = example.String
	return p, nil
}

// MissingReferences counts the rows of a table whose reference column holds a value that
// the key column of the referenced table does not have, and returns one such value.
func (w *Warehouse) MissingReferences(ctx context.Context, pid, table, column, refTable, refKey string) (int64, string, error) {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return 0, "", err
	}
	defer release()
	cat := ident(catalog(pid))
	var n int64
	var example sql.NullString
	err = c.QueryRowContext(ctx, "SELECT count(*), min(CAST(s."+ident(column)+" AS VARCHAR)) FROM "+cat+".main."+ident(table)+
		" s WHERE s."+ident(column)+" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "+cat+".main."+ident(refTable)+
		" r WHERE r."+ident(refKey)+" = s."+ident(column)+")").Scan(&n, &example)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("check reference %s.%s: %s", table, column, firstLine(err))
	}
	return n, example.String, nil
}
