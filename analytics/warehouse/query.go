package warehouse

import (
	"context"
	"database/sql"
	"fmt"
)

// Query runs a query on the project's database with its arguments bound as parameters,
// and hands the rows to scan. Tables are named as TableRef and LookupRef write them.
// The query ends when ctx does.
func (w *Warehouse) Query(ctx context.Context, pid, query string, args []any, scan func(*sql.Rows) error) error {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return err
	}
	defer release()
	rows, err := c.QueryContext(ctx, query, args...)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("query: %s", firstLine(err))
	}
	defer rows.Close()
	if err := scan(rows); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("query: %s", firstLine(err))
	}
	return nil
}

// TableRef is the quoted, qualified name of a dataset's table in the project's database.
func TableRef(pid, table string) string {
	return ident(catalog(pid)) + ".main." + ident(table)
}

// LookupRef is the quoted, qualified name of the element lookup of a key column (see
// HasLookup): a table of (id BIGINT, key).
func LookupRef(pid, table, column string) string {
	return lookupName(ident(catalog(pid)), table, column)
}
