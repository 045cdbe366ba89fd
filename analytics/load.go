package analytics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
)

// Load modes.
const (
	LoadFull        = warehouse.Full
	LoadIncremental = warehouse.Incremental
)

// LoadResult is the outcome of a data load.
type LoadResult struct {
	Dataset     string
	Mode        string
	Rows        int64
	DataVersion int64
}

// maxHeader bounds the header row of a CSV.
const maxHeader = 1 << 20

// Load loads a CSV into a dataset's table: all of it, or nothing. The header row names
// the columns: physical (id, f_amount), qualified (f_sales.f_amount) or by the identifier
// of a label, fact or attribute key (label.stores.name, fact.sales.amount); every column
// of the table must be given. A row that cannot be loaded is a *warehouse.RowError.
func (s *Service) Load(ctx context.Context, pid, dataset, mode string, body io.Reader) (LoadResult, error) {
	if mode == "" {
		mode = LoadFull
	}
	if mode != LoadFull && mode != LoadIncremental {
		return LoadResult{}, invalid("mode", "must be full or incremental")
	}
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return LoadResult{}, err
	}
	defer unlock()
	pm, err := s.model(ctx, pid)
	if err != nil {
		return LoadResult{}, err
	}
	m := pm.model
	table, err := loadTable(m, dataset)
	if err != nil {
		return LoadResult{}, err
	}
	br := bufio.NewReaderSize(body, 64<<10)
	header, err := readHeader(br)
	if err != nil {
		return LoadResult{}, err
	}
	columns, err := mapHeader(m, table, header)
	if err != nil {
		return LoadResult{}, err
	}
	refs, err := references(m, table)
	if err != nil {
		return LoadResult{}, err
	}
	pending, err := s.wh.Load(ctx, pid, warehouse.LoadRequest{Table: table, Columns: columns, Data: br, Mode: mode, References: refs})
	if err != nil {
		return LoadResult{}, err
	}
	defer pending.Rollback()
	version, err := s.store.BumpDataVersion(ctx, pid, s.now(), pending.Commit)
	if err != nil {
		return LoadResult{}, err
	}
	return LoadResult{Dataset: dataset, Mode: mode, Rows: pending.Rows, DataVersion: version}, nil
}

// loadTable returns the synchronized table of a dataset.
func loadTable(m *ldm.Model, dataset string) (*ldm.Table, error) {
	ds := m.Datasets[dataset]
	switch {
	case ds == nil:
		return nil, &NotFoundError{Kind: "dataset", ID: dataset}
	case ds.Date != "":
		return nil, invalid("", "{%s} is a date dimension; its data comes from the dates of the datasets that reference it", dataset)
	case ds.Table == "" || m.Tables[ds.Table] == nil:
		return nil, invalid("", "dataset {%s} has no table yet; SYNCHRONIZE {%[1]s} creates it", dataset)
	}
	return m.Tables[ds.Table], nil
}

// readHeader reads the header row: one line, without a byte order mark.
func readHeader(br *bufio.Reader) ([]string, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) && len(line) < maxHeader {
			continue
		}
		if errors.Is(err, io.EOF) && len(line) > 0 {
			break
		}
		if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			return nil, &warehouse.RowError{Row: 1, Msg: "the CSV has no header row naming its columns"}
		}
		return nil, fmt.Errorf("read CSV: %w", err)
	}
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(line))
	fields, err := r.Read()
	if err != nil {
		return nil, &warehouse.RowError{Row: 1, Msg: "the header row cannot be read: " + err.Error()}
	}
	return fields, nil
}

// mapHeader maps the header's names to the table's columns.
func mapHeader(m *ldm.Model, t *ldm.Table, header []string) ([]string, error) {
	byName := map[string]string{}
	for _, c := range t.Columns {
		byName[c.Name] = c.Name
		byName[t.Name+"."+c.Name] = c.Name
	}
	for _, c := range t.Columns {
		if _, taken := byName[c.Object]; !taken && !orphan(m, t, c) {
			byName[c.Object] = c.Name
		}
	}
	seen := map[string]int{}
	out := make([]string, len(header))
	for i, h := range header {
		name, ok := byName[strings.ToLower(strings.TrimSpace(h))]
		if !ok {
			name, ok = byName[strings.TrimSpace(h)] // identifiers are case-sensitive
		}
		if !ok {
			return nil, &warehouse.RowError{Row: 1, Column: h, Msg: "the table has no such column; its columns are " + columnNames(t)}
		}
		if j, dup := seen[name]; dup {
			return nil, &warehouse.RowError{Row: 1, Column: h, Msg: fmt.Sprintf("column %s is given twice (also as %q)", name, header[j])}
		}
		seen[name] = i
		out[i] = name
	}
	for _, c := range t.Columns {
		if _, ok := seen[c.Name]; !ok && !orphan(m, t, c) {
			return nil, &warehouse.RowError{Row: 1, Column: c.Name, Msg: "the column is missing; every column of table " + t.Name + " must be given"}
		}
	}
	return out, nil
}

func columnNames(t *ldm.Table) string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// orphan reports whether a reference column references nothing any more: its attribute
// was dropped, or no longer has that key. Such a column may be left out of a load.
func orphan(m *ldm.Model, t *ldm.Table, c ldm.TableColumn) bool {
	if c.Role != ldm.RoleReference {
		return false
	}
	a := m.Attributes[c.Object]
	if a == nil {
		return true
	}
	for _, k := range a.References() {
		if k.Column == (ldm.Column{Table: t.Name, Name: c.Name}) {
			return false
		}
	}
	return true
}

// references lists the reference columns to check and the keys they must find.
func references(m *ldm.Model, t *ldm.Table) ([]warehouse.Reference, error) {
	var out []warehouse.Reference
	for _, c := range t.Columns {
		if c.Role != ldm.RoleReference || orphan(m, t, c) {
			continue
		}
		a := m.Attributes[c.Object]
		ref := warehouse.Reference{Column: c.Name, Dataset: a.Dataset}
		if a.DatePart == "" {
			target := m.Datasets[a.Dataset]
			if target == nil || m.Tables[target.Table] == nil || m.Tables[target.Table].Key == "" {
				return nil, invalid("", "column %s references dataset {%s}, which has no table yet; SYNCHRONIZE it first", c.Name, a.Dataset)
			}
			ref.Table, ref.Key = target.Table, m.Tables[target.Table].Key
		}
		out = append(out, ref)
	}
	return out, nil
}
