package render

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/xuri/excelize/v2"

	"github.com/heraldhq/herald/analytics/grid"
)

// excelizeRows is what excelize's StreamWriter writes for rows, numbered
// from first, with the numbers of column i in style num[i]: the sheet's
// data, between <sheetData> and </sheetData>.
func excelizeRows(t testing.TB, attrs int, num []int, first int, rows ...grid.Row) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		cells := make([]any, attrs+len(num))
		for c := range attrs {
			cells[c] = header(r, c)
		}
		for c, style := range num {
			if p := value(r, c); p != nil {
				cells[attrs+c] = excelize.Cell{StyleID: style, Value: *p}
			}
		}
		ref, _ := excelize.CoordinatesToCellName(1, first+i)
		if err := sw.SetRow(ref, cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	return sheetData(t, b.Bytes())
}

// sheetData returns the data of a workbook's sheet.
func sheetData(t testing.TB, workbook []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(workbook), int64(len(workbook)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open(sheetPart)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	part, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	_, data, ok := bytes.Cut(part, []byte("<sheetData>"))
	data, _, ok2 := bytes.Cut(data, []byte("</sheetData>"))
	if !ok || !ok2 {
		t.Fatalf("no sheet data in %s", part)
	}
	return data
}

func ourRows(attrs int, num []int, first int, rows ...grid.Row) []byte {
	s := newSheetRows(attrs, num)
	var b []byte
	for i, r := range rows {
		b = s.appendRow(b, first+i, r)
	}
	return b
}

func TestDataRowsAsExcelizeWritesThem(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", excelize.TotalCellChars-1) + "😀tail"
	texts := []string{
		"", "North", "Žluťoučký kůň s.r.o.", "  padded ", "\ttab", "line\nbreak\r\n",
		`<b>&"quoted"'s</b>`, "nul\x00byte", "bad \xff utf-8", "\uFFFE\uFFFF", "emoji 😀",
		"_x0041_", "_x005F_", "_x005F_x0041_", "_x005F_xD800_", "_xD800_ gone", "a_x00e9_b_x005f_c",
		long, strings.Repeat("x", 40000),
	}
	numbers := []float64{0, math.Copysign(0, -1), 1, -1.5, 1254300.5, 0.312, 1e21, 1e-7, 5e-324,
		math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}
	num := []int{0, 3, 7}
	var rows []grid.Row
	for i, text := range texts {
		r := grid.Row{Headers: []string{text, texts[(i+1)%len(texts)]}}
		for j := range num {
			if (i+j)%4 != 3 { // some cells missing
				v := numbers[(i*3+j)%len(numbers)]
				r.Values = append(r.Values, &v)
			} else {
				r.Values = append(r.Values, nil)
			}
		}
		rows = append(rows, r)
	}
	rows = append(rows, grid.Row{}) // no headers, no values
	for _, first := range []int{1, 9, 99, 1048500} {
		want := excelizeRows(t, 2, num, first, rows...)
		if got := ourRows(2, num, first, rows...); !bytes.Equal(got, want) {
			t.Errorf("rows from %d:\n got %.2000q\nwant %.2000q", first, got, want)
		}
	}
	wide := make([]int, 30) // past column Z
	r := grid.Row{Headers: []string{"a"}}
	for i := range wide {
		v := float64(i)
		r.Values = append(r.Values, &v)
	}
	if got, want := ourRows(1, wide, 5, r), excelizeRows(t, 1, wide, 5, r); !bytes.Equal(got, want) {
		t.Errorf("wide row:\n got %q\nwant %q", got, want)
	}
}

func FuzzDataRowsAsExcelizeWritesThem(f *testing.F) {
	for _, seed := range []struct {
		text string
		v    float64
	}{
		{"North", 1.5}, {" x", math.Copysign(0, -1)}, {"_x005F_x0041_", 1e21}, {"_xd800_", math.Inf(1)},
		{"a\r\nb\t<&>", 5e-324}, {"\xff\xfe", math.NaN()},
	} {
		f.Add(seed.text, seed.v)
	}
	f.Fuzz(func(t *testing.T, text string, v float64) {
		r := grid.Row{Headers: []string{text}, Values: []*float64{&v, nil}}
		num := []int{2, 0}
		if got, want := ourRows(1, num, 7, r), excelizeRows(t, 1, num, 7, r); !bytes.Equal(got, want) {
			t.Errorf("text %q, value %v:\n got %q\nwant %q", text, v, got, want)
		}
	})
}

func TestXLSXRowsAcrossChunks(t *testing.T) {
	t.Parallel()
	const n = 20_000 // several chunks of rows
	f, sheet := openXLSX(t, longGrid(n))
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4+n {
		t.Fatalf("rows = %d, want the 4 above the data and %d", len(rows), n)
	}
	for _, i := range []int{0, 1, 4999, 5000, n - 1} {
		got := strings.Join(rows[4+i], "|")
		want := strings.Join([]string{[]string{"North", "South", "East", "West", "Central"}[i%5],
			fmt.Sprintf("Customer %05d", i),
			fstr(float64(i)*13.37 - 500), fstr(float64(i % 97)), fstr(float64(i%1000) / 1000)}, "|")
		if got != want {
			t.Errorf("data row %d = %q, want %q", i, got, want)
		}
	}
}

func TestXLSXFailures(t *testing.T) {
	t.Parallel()
	t.Run("rows fail after the writer started", func(t *testing.T) {
		t.Parallel()
		g := longGrid(0)
		var rs []grid.Row
		for r := range longGrid(5000).Rows {
			rs = append(rs, grid.Row{Headers: slices.Clone(r.Headers), Values: r.Values})
		}
		g.Rows = failing(errWarehouse, rs...)
		if err := XLSX(io.Discard, g, generatedAt); !errors.Is(err, errWarehouse) {
			t.Errorf("err = %v, want %v", err, errWarehouse)
		}
	})
	// excelize hands w the whole archive at once, after the rows: whenever w
	// fails, it fails that write.
	t.Run("the writer fails", func(t *testing.T) {
		t.Parallel()
		if err := XLSX(failingWriter{}, longGrid(20_000), generatedAt); !errors.Is(err, errDiskFull) {
			t.Errorf("err = %v, want %v", err, errDiskFull)
		}
	})
}

var errDiskFull = errors.New("disk full")

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func fstr(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func TestRowPipe(t *testing.T) {
	t.Parallel()
	t.Run("rows in order", func(t *testing.T) {
		t.Parallel()
		p := newRowPipe()
		var got bytes.Buffer
		written := make(chan error, 1)
		go func() {
			defer close(p.done)
			written <- p.writeTo(&got)
		}()
		var want bytes.Buffer
		for i := range 5000 {
			line := "row " + strconv.Itoa(i) + strings.Repeat(".", i%300) + "\n"
			want.WriteString(line)
			p.buf = append(p.buf, line...)
			if p.full() {
				if err := p.send(); err != nil {
					t.Fatal(err)
				}
			}
		}
		p.close(nil)
		if err := <-written; err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("wrote %d bytes, want the %d sent, in order", got.Len(), want.Len())
		}
	})
	t.Run("ended early", func(t *testing.T) {
		t.Parallel()
		p := newRowPipe()
		go func() {
			defer close(p.done)
			_ = p.writeTo(failingWriter{}) // fails on the first chunk
		}()
		var err error
		for err == nil { // more chunks than the pipe holds
			p.buf = append(p.buf, make([]byte, rowChunk)...)
			err = p.send()
		}
		if !errors.Is(err, errWriterGone) {
			t.Errorf("send = %v, want %v", err, errWriterGone)
		}
	})
}

func TestXLSXPanickingRows(t *testing.T) {
	t.Parallel()
	// The bubble fails the test if the workbook's writer outlives XLSX.
	synctest.Test(t, func(t *testing.T) {
		g := longGrid(0)
		g.Rows = func(yield func(grid.Row, error) bool) {
			for r := range longGrid(5000).Rows {
				if !yield(r, nil) {
					return
				}
			}
			panic("rows broke")
		}
		defer func() {
			if p := recover(); p != "rows broke" {
				t.Errorf("recovered %v, want the rows' panic", p)
			}
		}()
		_ = XLSX(io.Discard, g, generatedAt)
		t.Error("XLSX returned; want the rows' panic")
	})
}
