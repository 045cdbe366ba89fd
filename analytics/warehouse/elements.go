package warehouse

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
)

// Element is an element of an attribute: its id and its value in one label.
type Element struct {
	ID    int64
	Title string // empty for a missing label value
}

// ElementsQuery asks for the elements of an attribute shown in one of its labels.
type ElementsQuery struct {
	// Table is the attribute's synchronized table, Key its key column and Label the
	// label's column (the key itself when empty).
	Table      *ldm.Table
	Key, Label string
	// DatePart and DateFormat ask for an attribute of a date dimension instead (with Table
	// nil): its elements are the dates found in DateColumns, the references to the dimension.
	DatePart, DateFormat string
	DateColumns          []ldm.Column
	// IDs keeps only these elements when not empty.
	IDs []int64
	// Offset and Limit page the elements; Limit 0 means all.
	Offset, Limit int
}

// Elements returns a page of the attribute's elements, ordered by their label value (by
// id for a date dimension), and how many there are in all.
func (w *Warehouse) Elements(ctx context.Context, pid string, q ElementsQuery) ([]Element, int64, error) {
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	cat := ident(catalog(pid))
	var inner, order string
	if q.Table != nil {
		inner, err = keyedElements(cat, q)
		order = "sort NULLS LAST, id"
	} else {
		inner, err = dateElements(cat, q)
		order = "id"
	}
	if err != nil {
		return nil, 0, err
	}
	query := "SELECT id, title, count(*) OVER () FROM (" + inner + ") e"
	if len(q.IDs) > 0 {
		ids := make([]string, len(q.IDs))
		for i, id := range q.IDs {
			ids[i] = strconv.FormatInt(id, 10)
		}
		query += " WHERE id IN (" + strings.Join(ids, ", ") + ")"
	}
	query += " ORDER BY " + order
	if q.Limit > 0 {
		query += " LIMIT " + strconv.Itoa(q.Limit)
	}
	if q.Offset > 0 {
		query += " OFFSET " + strconv.Itoa(q.Offset)
	}
	rows, err := c.QueryContext(ctx, query)
	if err != nil {
		return nil, 0, fmt.Errorf("elements: %s", firstLine(err))
	}
	defer rows.Close()
	var out []Element
	var total int64
	for rows.Next() {
		var e Element
		var title sql.NullString
		if err := rows.Scan(&e.ID, &title, &total); err != nil {
			return nil, 0, fmt.Errorf("elements: %w", err)
		}
		e.Title = title.String
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("elements: %w", err)
	}
	if len(out) == 0 && q.Offset > 0 {
		total, err = w.countElements(ctx, c, inner, q.IDs)
	}
	return out, total, err
}

// countElements counts the elements when the page is past the end.
func (w *Warehouse) countElements(ctx context.Context, c *sql.Conn, inner string, ids []int64) (int64, error) {
	q := "SELECT count(*) FROM (" + inner + ") e"
	if len(ids) > 0 {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.FormatInt(id, 10)
		}
		q += " WHERE id IN (" + strings.Join(s, ", ") + ")"
	}
	var n int64
	if err := c.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("elements: %s", firstLine(err))
	}
	return n, nil
}

// keyedElements is the query of an attribute with a key column: one row per key value,
// with the element id (the key itself, or its number in the lookup) and the label value.
func keyedElements(cat string, q ElementsQuery) (string, error) {
	key, ok := q.Table.Column(q.Key)
	if !ok {
		return "", fmt.Errorf("elements: table %s has no column %s", q.Table.Name, q.Key)
	}
	label := q.Key
	if q.Label != "" {
		label = q.Label
	}
	if _, ok := q.Table.Column(label); !ok {
		return "", fmt.Errorf("elements: table %s has no column %s", q.Table.Name, label)
	}
	k, lv := ident(q.Key), ident(label)
	grouped := "SELECT " + k + " AS k, any_value(" + lv + ") AS v FROM " + cat + ".main." + ident(q.Table.Name) +
		" WHERE " + k + " IS NOT NULL GROUP BY " + k
	if !hasLookup(key) {
		return "SELECT CAST(k AS BIGINT) AS id, CAST(v AS VARCHAR) AS title, v AS sort FROM (" + grouped + ") g", nil
	}
	return "SELECT l.id, CAST(g.v AS VARCHAR) AS title, g.v AS sort FROM (" + grouped + ") g JOIN " +
		lookupName(cat, q.Table.Name, q.Key) + " l ON l.key = g.k", nil
}

// dateElements is the query of a date dimension attribute: the distinct dates of the
// reference columns, as element ids and label values of the part.
func dateElements(cat string, q ElementsQuery) (string, error) {
	id, ok := DateID(q.DatePart, "d")
	label, ok2 := DateLabel(q.DateFormat, "d")
	if !ok || !ok2 {
		return "", fmt.Errorf("elements: unknown date part %q or format %q", q.DatePart, q.DateFormat)
	}
	if len(q.DateColumns) == 0 {
		return "SELECT NULL::BIGINT AS id, NULL::VARCHAR AS title WHERE false", nil
	}
	parts := make([]string, len(q.DateColumns))
	for i, c := range q.DateColumns {
		parts[i] = "SELECT DISTINCT " + ident(c.Name) + " AS d FROM " + cat + ".main." + ident(c.Table)
	}
	return "SELECT DISTINCT " + id + " AS id, " + label + " AS title FROM (" + strings.Join(parts, " UNION ") +
		") dates WHERE d IS NOT NULL", nil
}
