package revenue

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Row is a row of the report: a region's and a product's names and their revenue.
// Scan and XTab.Result fill it; Same's errors print it with its fields' names.
type Row struct {
	region, product string
	amount          float64
}

// Result is the rows of the report, in any order.
type Result []Row

// cents is an amount to the cent. The amounts are DECIMAL(15,2) and every side sums
// them exactly before it casts the sum to DOUBLE; a sum below 2^53 cents is within
// half a cent of that DOUBLE, so rounding gives the exact sum back.
func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// Same compares two results row by row, in region and product order: the same names and
// the same amounts to the cent. The error names the first row that differs.
func Same(a Result, aName string, b Result, bName string) error {
	a, b = sorted(a), sorted(b)
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return fmt.Errorf("%s has %d rows, %s %d: first missing %+v", aName, len(a), bName, len(b), b[i])
		case i >= len(b):
			return fmt.Errorf("%s has %d rows, %s %d: first extra %+v", aName, len(a), bName, len(b), a[i])
		case a[i].region != b[i].region || a[i].product != b[i].product || cents(a[i].amount) != cents(b[i].amount):
			return fmt.Errorf("row %d differs: %s %+v, %s %+v", i, aName, a[i], bName, b[i])
		}
	}
	return nil
}

// sorted returns a copy of r in region and product order.
func sorted(r Result) Result {
	return slices.SortedFunc(slices.Values(r), func(x, y Row) int {
		return cmp.Or(strings.Compare(x.region, y.region), strings.Compare(x.product, y.product))
	})
}

// Scan runs a query of the report and reads every row.
func Scan(ctx context.Context, db *sql.DB, q string) (Result, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out Result
	for rows.Next() {
		var r Row
		if err := rows.Scan(&r.region, &r.product, &r.amount); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
