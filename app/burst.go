package app

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/engine"
)

// BurstRows executes a burst's report as p and yields its rows: the value of
// the label address and the element of the attribute by each row has.
func (a analyticsPort) BurstRows(ctx context.Context, p engine.Principal, report, address, by string) (iter.Seq2[engine.BurstRow, error], error) {
	byID, err := objectID(p.Project, by)
	if err != nil {
		return nil, err
	}
	byObj, err := a.md.Object(ctx, p.Project, byID)
	if err != nil {
		return nil, err
	}
	res, err := a.ExecuteReport(ctx, p, report)
	if err != nil {
		return nil, err
	}
	levels, rows, err := a.exec.RowHeaders(ctx, p.Project, res.ID)
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(levels, func(l xtab.RowLevel) bool { return l.URI == address })
	of := slices.IndexFunc(levels, func(l xtab.RowLevel) bool { return l.Attribute == byObj.Identifier })
	switch {
	case at < 0:
		return nil, fmt.Errorf("its rows no longer show the addresses' label %s", address)
	case of < 0:
		return nil, fmt.Errorf("its rows no longer show the attribute %s", by)
	}
	elements := by + "/elements?id="
	return func(yield func(engine.BurstRow, error) bool) {
		for row, err := range rows {
			if err != nil {
				yield(engine.BurstRow{}, err)
				return
			}
			br := engine.BurstRow{Address: row[at].Label}
			if row[of].ID > 0 { // ids count from 1; a row without the element reads 0
				br.Element = elements + strconv.FormatInt(row[of].ID, 10)
			}
			if !yield(br, nil) {
				return
			}
		}
	}, nil
}

// burstReports checks the reports subscriptions burst from, for the domain
// layer, over the app's metadata service (opened after the domain layer).
type burstReports struct{ app *App }

// CheckBurst says which of report, address and by cannot give a burst its
// rows: the report (or report definition) must show the label address in
// its rows, and a row of the attribute by (itself, or one of its labels).
func (b burstReports) CheckBurst(ctx context.Context, pid, report, address, by string) (string, string, error) {
	_, content, err := reportDefinition(ctx, b.app.md, pid, report)
	var missing *analytics.NotFoundError
	var neither *notDefinitionError
	if errors.As(err, &missing) || errors.As(err, &neither) {
		return "report", "names no report or report definition of this project", nil
	}
	if err != nil {
		return "", "", err
	}
	model, err := b.app.md.Model(ctx, pid)
	if err != nil {
		return "", "", err
	}
	kinds := map[string]string{}       // URI to category
	attributeOf := map[string]string{} // URI to its attribute's identifier
	for _, uri := range append(rowURIs(content), address, by) {
		id, err := objectID(pid, uri)
		if err != nil {
			continue
		}
		o, err := b.app.md.Object(ctx, pid, id)
		if errors.As(err, &missing) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		kinds[uri] = o.Category
		switch ldm.Kind(o.Category) {
		case ldm.KindAttribute:
			attributeOf[uri] = o.Identifier
		case ldm.KindLabel:
			if l := model.Labels[o.Identifier]; l != nil {
				attributeOf[uri] = l.Attribute
			}
		}
	}
	rows := rowURIs(content)
	switch {
	case kinds[address] != string(ldm.KindLabel) && kinds[address] != string(ldm.KindAttribute):
		return "address", "must be the URI of a label (or an attribute) of this project", nil
	case !slices.Contains(rows, address):
		return "address", "is not a label the report shows in its rows: the addresses are read from it", nil
	case kinds[by] != string(ldm.KindAttribute):
		return "by", "must be the URI of an attribute of this project", nil
	case !slices.ContainsFunc(rows, func(uri string) bool { return attributeOf[uri] == attributeOf[by] }):
		return "by", "is not an attribute the report shows in its rows (itself or one of its labels): each address gets the elements of its rows", nil
	}
	return "", "", nil
}

// rowURIs lists the URIs of the attributes and labels of a definition's rows.
func rowURIs(c analytics.ReportDefinitionContent) []string {
	var out []string
	for _, it := range c.Grid.Rows {
		if it.Attribute != nil {
			out = append(out, it.Attribute.URI)
		}
	}
	return out
}
