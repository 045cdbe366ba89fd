package render

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/grid"
)

func TestCSV(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		grid    func() *grid.Grid
		headers int // header rows
	}{
		{"sales", salesGrid, 1},
		{"pivot", pivotGrid, 2},
		{"empty", func() *grid.Grid { return longGrid(0) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := CSV(&out, tt.grid()); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tt.name+".csv"), out.Bytes())

			for i, line := range strings.SplitAfter(out.String(), "\r\n") {
				if line != "" && (!strings.HasPrefix(line, `"`) || !strings.HasSuffix(line, "\"\r\n")) {
					t.Errorf("line %d is not quoted and CRLF-terminated: %q", i+1, line)
				}
			}
			records, err := csv.NewReader(&out).ReadAll()
			if err != nil {
				t.Fatalf("read back: %v", err)
			}
			checkCSVValues(t, tt.grid(), records, tt.headers)
		})
	}
}

// checkCSVValues compares the records after the header rows with the rows
// of g: the same attribute values and exactly the same numbers.
func checkCSVValues(t *testing.T, g *grid.Grid, records [][]string, headers int) {
	t.Helper()
	i := headers
	for r, err := range g.Rows {
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(records) {
			t.Fatalf("%d records, want more", len(records))
		}
		rec := records[i]
		for j, h := range r.Headers {
			if rec[j] != h {
				t.Errorf("record %d field %d = %q, want %q", i, j, rec[j], h)
			}
		}
		for j, v := range r.Values {
			field := rec[len(g.RowHeaders)+j]
			if v == nil {
				if field != "" {
					t.Errorf("record %d: empty cell written as %q", i, field)
				}
				continue
			}
			got, err := strconv.ParseFloat(field, 64)
			if err != nil || got != *v {
				t.Errorf("record %d: number %v written as %q", i, *v, field)
			}
		}
		i++
	}
	if i != len(records) {
		t.Errorf("%d records, want %d", len(records), i)
	}
}

func TestCSVMultiLevelHeader(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := CSV(&out, pivotGrid()); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"", "", "2024", "2024", "2025", "2025"},
		{"Region", "Product", "Revenue", "Units", "Revenue", "Units"},
	}
	for i, w := range want {
		if strings.Join(records[i], "|") != strings.Join(w, "|") {
			t.Errorf("header row %d = %q, want %q", i+1, records[i], w)
		}
	}
}

func TestCSVErrors(t *testing.T) {
	t.Parallel()
	t.Run("rows fail", func(t *testing.T) {
		g := salesGrid()
		g.Rows = failing(errWarehouse, grid.Row{Headers: []string{"East"}, Values: []*float64{num(1), nil, nil}})
		if err := CSV(&bytes.Buffer{}, g); !errors.Is(err, errWarehouse) {
			t.Errorf("err = %v, want %v", err, errWarehouse)
		}
	})
	t.Run("writer fails", func(t *testing.T) {
		errDisk := errors.New("disk full")
		if err := CSV(failWriter{errDisk}, longGrid(5000)); !errors.Is(err, errDisk) {
			t.Errorf("err = %v, want %v", err, errDisk)
		}
	})
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update to accept):\n got: %q\nwant: %q", path, got, want)
	}
}
