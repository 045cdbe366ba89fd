package warehouse

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Schemas of a project's database: the tables of datasets, and the element lookups.
const (
	SchemaMain   = "main"
	SchemaHerald = "herald"
)

// DumpedTable is a table of a project's database written to a Parquet file.
type DumpedTable struct {
	Schema string // SchemaMain or SchemaHerald
	Name   string
	Rows   int64
	Path   string
}

// TempDir is the folder inside the warehouse where DuckDB may write files, such as the
// Parquet files of Dump, and read them back, as Restore does.
func (w *Warehouse) TempDir() string { return filepath.Join(w.dir, "tmp") }

// Dump writes every table of the project's database that keep accepts to a Parquet file
// in dir, which must be inside TempDir. The tables are read in one transaction, so they
// are one consistent state; DuckDB streams them, so a table of any size takes little
// memory.
func (w *Warehouse) Dump(ctx context.Context, pid, dir string, keep func(schema, name string) bool) ([]DumpedTable, error) {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return nil, err
	}
	defer release()
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	defer func() {
		if _, err := c.ExecContext(context.Background(), "ROLLBACK"); err != nil {
			discard(c)
		}
	}()
	rows, err := c.QueryContext(ctx, "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "+
		"AND schema_name IN (?, ?) ORDER BY schema_name, table_name", catalog(pid), SchemaMain, SchemaHerald)
	if err != nil {
		return nil, fmt.Errorf("dump: list tables: %w", err)
	}
	var out []DumpedTable
	for rows.Next() {
		var t DumpedTable
		if err := rows.Scan(&t.Schema, &t.Name); err != nil {
			rows.Close()
			return nil, fmt.Errorf("dump: list tables: %w", err)
		}
		if keep == nil || keep(t.Schema, t.Name) {
			out = append(out, t)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dump: list tables: %w", err)
	}
	cat := ident(catalog(pid))
	for i := range out {
		t := &out[i]
		t.Path = filepath.Join(dir, fmt.Sprintf("%03d.parquet", i))
		res, err := c.ExecContext(ctx, "COPY (SELECT * FROM "+cat+"."+ident(t.Schema)+"."+ident(t.Name)+") TO "+literal(t.Path)+
			" (FORMAT parquet, COMPRESSION zstd)")
		if err != nil {
			return nil, fmt.Errorf("dump %s.%s: %s", t.Schema, t.Name, firstLine(err))
		}
		if t.Rows, err = res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("dump %s.%s: %w", t.Schema, t.Name, err)
		}
	}
	return out, nil
}

// Restore adds the rows of a Parquet file that Dump wrote to a table of the transaction's
// database, matching columns by name, and returns how many rows it added. The file must
// be inside TempDir.
func (t *Tx) Restore(ctx context.Context, schema, name, path string) (int64, error) {
	if schema != SchemaMain && schema != SchemaHerald {
		return 0, fmt.Errorf("restore %s.%s: unknown schema", schema, name)
	}
	table := t.cat + "." + ident(schema) + "." + ident(name)
	res, err := t.conn.ExecContext(ctx, "INSERT INTO "+table+" BY NAME SELECT * FROM read_parquet("+literal(path)+")")
	if err != nil {
		return 0, fmt.Errorf("restore %s.%s: %s", schema, name, strings.TrimSpace(firstLine(err)))
	}
	return res.RowsAffected()
}
