package xtab

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParsePage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, query string
		want        Page
		bad         string
	}{
		{name: "empty", query: ""},
		{name: "semicolon", query: "offset=10,2;size=100,5", want: Page{Row: 10, Col: 2, Rows: 100, Cols: 5}},
		{name: "ampersand", query: "size=3,4&offset=1,0", want: Page{Row: 1, Rows: 3, Cols: 4}},
		{name: "escaped comma", query: "offset=7%2C1", want: Page{Row: 7, Col: 1}},
		{name: "other parameters", query: "x=1;offset=1,1;_=123", want: Page{Row: 1, Col: 1}},
		{name: "one number", query: "offset=1", bad: "offset"},
		{name: "negative", query: "size=-1,2", bad: "size"},
		{name: "not a number", query: "offset=a,b", bad: "offset"},
		{name: "too large", query: "size=99999999999,1", bad: "size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePage(tc.query)
			var pe *PageError
			if tc.bad != "" {
				if !errors.As(err, &pe) || pe.Param != tc.bad {
					t.Fatalf("err = %v, want a PageError for %s", err, tc.bad)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParsePage(%q) = %+v, %v; want %+v", tc.query, got, err, tc.want)
			}
		})
	}
}

func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"", "offset=1,2;size=3,4", "size=0,0&offset=9,9", "offset=,", "offset=1%2c2", ";;&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		p, err := ParsePage(q)
		if err == nil && (p.Row < 0 || p.Col < 0 || p.Rows < 0 || p.Cols < 0) {
			t.Fatalf("ParsePage(%q) = %+v", q, p)
		}
	})
}

// grid2 is a plan of regions in rows and years then metrics in columns.
func grid2() *plan {
	return &plan{
		Rows:    []level{{Attr: 0, Title: "Region"}},
		Columns: []level{{Attr: 1, Title: "Year", Date: true}, {Metric: true}},
		Metrics: []Metric{{Title: "Revenue", Format: "#,##0"}, {Title: "Orders", Format: "#"}},
	}
}

func flatOf(rows ...[]any) *flat {
	f := &flat{}
	for _, r := range rows {
		f.attrs = append(f.attrs, []elem{r[0].(elem), r[1].(elem)})
		var v []float64
		var ok []bool
		for _, x := range r[2:] {
			if x == nil {
				v, ok = append(v, 0), append(ok, false)
			} else {
				v, ok = append(v, x.(float64)), append(ok, true)
			}
		}
		f.values, f.valid = append(f.values, v), append(f.valid, ok)
	}
	return f
}

func TestPivotAndPage(t *testing.T) {
	t.Parallel()
	west, east := elem{ID: 2, Label: "West"}, elem{ID: 1, Label: "East"}
	y24, y25 := elem{ID: 2024, Label: "2024"}, elem{ID: 2025, Label: "2025"}
	p := grid2()
	f := flatOf(
		[]any{west, y25, 5.0, 1.0},
		[]any{east, y24, 10.5, 2.0},
		[]any{west, y24, nil, 3.0},
	)
	tb, err := pivot(p, f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.xtab")
	if err := tb.write(path); err != nil {
		t.Fatal(err)
	}
	x, err := readPage(path, p, Page{})
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	wantData := [][]*string{{s("10.5"), s("2"), nil, nil}, {nil, s("3"), s("5"), s("1")}}
	if !reflect.DeepEqual(x.Data, wantData) {
		t.Errorf("data = %s", dump(x.Data))
	}
	if x.OverallSize != (Size{Rows: 2, Columns: 4}) || x.Size != x.OverallSize || x.Offset != (Size{}) {
		t.Errorf("sizes %+v %+v %+v", x.OverallSize, x.Size, x.Offset)
	}
	if !reflect.DeepEqual(x.Rows.Lookups, []map[string]string{{"1": "East", "2": "West"}}) {
		t.Errorf("row lookups %v", x.Rows.Lookups)
	}
	if !reflect.DeepEqual(x.Columns.Lookups, []map[string]string{{"2024": "2024", "2025": "2025"}, {"0": "Revenue", "1": "Orders"}}) {
		t.Errorf("column lookups %v", x.Columns.Lookups)
	}
	tree := x.Columns.Tree
	if tree.Type != "root" || tree.ID != nil || tree.First != 0 || tree.Last != 3 || len(tree.Children) != 2 ||
		!reflect.DeepEqual(tree.Index, map[string][]int{"2024": {0}, "2025": {1}}) {
		t.Fatalf("column tree %s", dump(tree))
	}
	y := tree.Children[1]
	if *y.ID != "2025" || y.Type != "normal" || y.First != 2 || y.Last != 3 || len(y.Children) != 2 ||
		y.Children[1].Type != "metric" || *y.Children[1].ID != "1" || y.Children[1].First != 3 || len(y.Children[1].Children) != 0 {
		t.Errorf("year node %s", dump(y))
	}

	// A page of the second row and the last two columns.
	x, err = readPage(path, p, Page{Row: 1, Col: 2, Rows: 5, Cols: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x.Data, [][]*string{{s("5"), s("1")}}) || x.Size != (Size{Rows: 1, Columns: 2}) ||
		x.Offset != (Size{Rows: 1, Columns: 2}) || x.Rows.Lookups[0]["2"] != "West" || len(x.Rows.Lookups[0]) != 1 ||
		x.Columns.Tree.Last != 1 || *x.Columns.Tree.Children[0].ID != "2025" {
		t.Errorf("page = %s", dump(x))
	}
	// A page past the end is empty.
	if x, err = readPage(path, p, Page{Row: 9}); err != nil || len(x.Data) != 0 || x.Offset.Rows != 2 {
		t.Errorf("past the end: %s, %v", dump(x), err)
	}
}

func TestPivotMetricsInRows(t *testing.T) {
	t.Parallel()
	p := &plan{Rows: []level{{Metric: true}, {Attr: 0, Title: "Region"}}, Columns: []level{},
		Metrics: []Metric{{Title: "A"}, {Title: "B"}}, Attributes: nil}
	f := &flat{attrs: [][]elem{{{ID: 1, Label: "x"}}, {{ID: 2, Label: "y"}}}, values: [][]float64{{1, 2}, {3, 4}}, valid: [][]bool{{true, true}, {true, false}}}
	tb, err := pivot(p, f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.xtab")
	if err := tb.write(path); err != nil {
		t.Fatal(err)
	}
	x, err := readPage(path, p, Page{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, row := range x.Data {
		if row[0] == nil {
			got = append(got, "-")
		} else {
			got = append(got, *row[0])
		}
	}
	if strings.Join(got, ",") != "1,3,2,-" || x.OverallSize.Columns != 1 || len(x.Rows.Tree.Children) != 2 ||
		x.Rows.Tree.Children[0].Type != "metric" || len(x.Columns.Lookups) != 0 {
		t.Errorf("metrics in rows: %v %s", got, dump(x))
	}
}

func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.xtab")
	w, err := createFile(path, fileHeader{Rows: 2, Columns: [][]elem{{{ID: 0, Label: "M"}}, {{ID: 1, Label: "N"}}}})
	if err != nil {
		t.Fatal(err)
	}
	w.row([]elem{{ID: -5, Label: "über"}}, []float64{1.5, 0}, []bool{true, false})
	w.row([]elem{{ID: 1 << 40, Label: ""}}, []float64{-0.25, 1e300}, []bool{true, true})
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	r, err := openFile(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	heads, values := make([]elem, 1), make([]*float64, 2)
	if err := r.next(heads, values); err != nil || heads[0] != (elem{ID: -5, Label: "über"}) || *values[0] != 1.5 || values[1] != nil {
		t.Fatalf("row 1: %v %v %v", heads, values, err)
	}
	if err := r.next(heads, values); err != nil || heads[0].ID != 1<<40 || *values[0] != -0.25 || *values[1] != 1e300 {
		t.Fatalf("row 2: %v %v %v", heads, values, err)
	}
	if err := r.next(heads, values); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last row: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}

func FuzzReadFile(f *testing.F) {
	var b bytes.Buffer
	b.WriteString(fileMagic)
	head, _ := json.Marshal(fileHeader{Rows: 1, Columns: [][]elem{{{Label: "M"}}}})
	b.WriteByte(byte(len(head)))
	b.Write(head)
	b.Write([]byte{2, 1, 'x', 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	f.Add(b.Bytes())
	f.Add([]byte(fileMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := newFileReader(bytes.NewReader(data), 1)
		if err != nil {
			return
		}
		heads, values := make([]elem, 1), make([]*float64, len(r.header.Columns))
		for range 1000 {
			if err := r.next(heads, values); err != nil {
				return
			}
		}
	})
}

func dump(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func TestFileLabelsOfConsecutiveRows(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.xtab")
	w, err := createFile(path, fileHeader{Rows: 4, Columns: [][]elem{{{Label: "M"}}}})
	if err != nil {
		t.Fatal(err)
	}
	rows := [][]elem{{{1, "East"}, {7, "a"}}, {{1, "East"}, {8, "b"}}, {{2, "West"}, {8, "b"}}, {{3, ""}, {9, "Westerly"}}}
	for _, r := range rows {
		w.row(r, []float64{1}, []bool{true})
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	r, err := openFile(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	values := make([]*float64, 1)
	for i, want := range rows {
		heads := make([]elem, 2)
		if err := r.next(heads, values); err != nil || !reflect.DeepEqual(heads, want) {
			t.Fatalf("row %d: %v, %v; want %v", i, heads, err, want)
		}
	}
}
