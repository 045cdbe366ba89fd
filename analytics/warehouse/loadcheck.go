package warehouse

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
)

// checkKey checks that the primary key is given, once per row. One scan answers whether
// all is well; only a bad load pays for finding the row.
func (l *loader) checkKey(ctx context.Context) error {
	key := l.req.Table.Key
	if key == "" {
		return nil
	}
	k := ident(key)
	var empty, dups int64
	if err := l.conn.QueryRowContext(ctx, "SELECT count(*) - count("+k+"), count("+k+") - count(DISTINCT "+k+") FROM "+
		l.staging()).Scan(&empty, &dups); err != nil {
		return fmt.Errorf("check key: %w", err)
	}
	if empty > 0 {
		var rowid int64
		if err := l.conn.QueryRowContext(ctx, "SELECT min(rowid) FROM "+l.staging()+" WHERE "+k+" IS NULL").Scan(&rowid); err != nil {
			return fmt.Errorf("check key: %w", err)
		}
		return &RowError{Row: l.row(rowid), Column: key, Msg: "the key is empty"}
	}
	if dups == 0 {
		return nil
	}
	var value string
	var first, again int64
	err := l.conn.QueryRowContext(ctx, "SELECT CAST("+k+" AS VARCHAR), min(rowid), "+
		"list(rowid ORDER BY rowid)[2] AS second FROM "+l.staging()+" GROUP BY "+k+" HAVING count(*) > 1 ORDER BY second LIMIT 1").
		Scan(&value, &first, &again)
	if err != nil {
		return fmt.Errorf("check key: %w", err)
	}
	return &RowError{Row: l.row(again), Column: key, Msg: fmt.Sprintf("key %q is also in row %d", value, l.row(first))}
}

// valueCheck is a condition no value of a column may meet.
type valueCheck struct {
	column, cond, msg string
}

// checkValues checks, in one scan, VARCHAR lengths, that integer keys (element ids) are
// not negative and that dates are not before the date dimensions' first day.
func (l *loader) checkValues(ctx context.Context) error {
	var checks []valueCheck
	for _, name := range l.req.Columns {
		c, _ := l.req.Table.Column(name)
		col := ident(name)
		switch {
		case c.Type.Name == maql.TypeVarchar:
			checks = append(checks, valueCheck{name, fmt.Sprintf("length(%s) > %d", col, c.Type.Length),
				fmt.Sprintf("the value is longer than %s allows", c.Type)})
		case c.Role == ldm.RoleKey && integer(c.Type):
			checks = append(checks, valueCheck{name, col + " < 0", "the key is negative; integer keys are element ids and must be 0 or more"})
		case c.Type.Name == maql.TypeDate && c.Role == ldm.RoleReference:
			checks = append(checks, valueCheck{name, col + " < DATE " + literal(firstDate), "dates before " + firstDate + " are not supported"})
		}
	}
	if len(checks) == 0 {
		return nil
	}
	exprs := make([]string, len(checks))
	rowids := make([]sql.NullInt64, len(checks))
	dest := make([]any, len(checks))
	for i, c := range checks {
		exprs[i] = "min(rowid) FILTER (WHERE " + c.cond + ")"
		dest[i] = &rowids[i]
	}
	if err := l.conn.QueryRowContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+l.staging()).Scan(dest...); err != nil {
		return fmt.Errorf("check values: %w", err)
	}
	var bad *RowError
	for i, r := range rowids {
		if r.Valid && (bad == nil || l.row(r.Int64) < bad.Row) {
			bad = &RowError{Row: l.row(r.Int64), Column: checks[i].column, Msg: checks[i].msg}
		}
	}
	if bad != nil {
		return bad
	}
	return nil
}

// checkReferences checks that every reference finds its key. The distinct values are
// checked first, which is quick when they are few; only a bad load pays for finding the
// first bad row.
func (l *loader) checkReferences(ctx context.Context) error {
	for _, ref := range l.req.References {
		if ref.Table == "" || !l.loaded(ref.Column) {
			continue
		}
		col := ident(ref.Column)
		missing := "NOT EXISTS (SELECT 1 FROM " + l.cat + ".main." + ident(ref.Table) + " t WHERE t." + ident(ref.Key) + " = s." + col + ")"
		var bad bool
		err := l.conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM (SELECT DISTINCT "+col+" FROM "+l.staging()+" WHERE "+col+
			" IS NOT NULL) s WHERE "+missing+")").Scan(&bad)
		if err != nil {
			return fmt.Errorf("check reference %s: %w", ref.Column, err)
		}
		if !bad {
			continue
		}
		var rowid int64
		var value string
		err = l.conn.QueryRowContext(ctx, "SELECT rowid, CAST("+col+" AS VARCHAR) FROM "+l.staging()+" s WHERE "+col+
			" IS NOT NULL AND "+missing+" ORDER BY rowid LIMIT 1").Scan(&rowid, &value)
		if err != nil {
			return fmt.Errorf("check reference %s: %w", ref.Column, err)
		}
		return &RowError{Row: l.row(rowid), Column: ref.Column, Msg: fmt.Sprintf("%q is not a loaded key of dataset {%s}", value, ref.Dataset)}
	}
	return nil
}
