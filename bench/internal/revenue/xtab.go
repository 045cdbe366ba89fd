package revenue

import (
	"fmt"
	"strconv"
)

// XTab is a data result as the API answers it: the row headers and the cells.
type XTab struct {
	Rows struct {
		Lookups []map[string]string `json:"lookups"`
		Tree    node                `json:"tree"`
	} `json:"rows"`
	Data        [][]*string `json:"data"`
	OverallSize struct {
		Rows int `json:"rows"`
	} `json:"overall_size"`
}

// node is a node of a header tree; First and Last are the rows it spans.
type node struct {
	ID       *string `json:"id"`
	First    int     `json:"first"`
	Last     int     `json:"last"`
	Children []node  `json:"children"`
}

// Result reads the report's rows out of a data result whose rows are region, then
// product, and whose one column is the metric.
func (x *XTab) Result() (Result, error) {
	if len(x.Data) != x.OverallSize.Rows || len(x.Rows.Lookups) != 2 {
		return nil, fmt.Errorf("data result: %d of %d rows, %d row levels", len(x.Data), x.OverallSize.Rows, len(x.Rows.Lookups))
	}
	out := make(Result, 0, len(x.Data))
	for _, r := range x.Rows.Tree.Children {
		for _, p := range r.Children {
			if r.ID == nil || p.ID == nil || p.First != p.Last || p.First != len(out) || p.First >= len(x.Data) {
				return nil, fmt.Errorf("data result: unexpected row header %+v under %+v", p, r)
			}
			cells := x.Data[p.First]
			if len(cells) != 1 || cells[0] == nil {
				return nil, fmt.Errorf("data result: row %d has cells %v", p.First, cells)
			}
			v, err := strconv.ParseFloat(*cells[0], 64)
			if err != nil {
				return nil, fmt.Errorf("data result: row %d: %w", p.First, err)
			}
			out = append(out, Row{region: x.Rows.Lookups[0][*r.ID], product: x.Rows.Lookups[1][*p.ID], amount: v})
		}
	}
	if len(out) != len(x.Data) {
		return nil, fmt.Errorf("data result: the row headers name %d of %d rows", len(out), len(x.Data))
	}
	return out, nil
}
