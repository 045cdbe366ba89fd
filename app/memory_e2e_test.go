package app_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
)

// junkRows is a CSV body of n bytes or a little more: the header of the sales dataset,
// then rows none of which can be loaded.
type junkRows struct {
	header string
	left   int64
	buf    bytes.Buffer
	row    int
}

func (j *junkRows) Read(p []byte) (int, error) {
	if j.header != "" {
		j.buf.WriteString(j.header)
		j.header = ""
	}
	for j.buf.Len() < len(p) && j.left > 0 {
		j.row++
		n, _ := j.buf.WriteString("junk-not-a-number-" + strings.Repeat("x", j.row%40) + ",x,y,2024-01-31\n")
		j.left -= int64(n)
	}
	if j.buf.Len() == 0 {
		return 0, io.EOF
	}
	return j.buf.Read(p)
}

// processWorld is a herald binary running as a child process, with the admin logged in
// and a project holding the sales model.
func processWorld(t *testing.T, env ...string) (*apptest.Process, *mdClient) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the herald binary")
	}
	p := apptest.StartProcess(t, t.TempDir(), env...)
	admin := newBrowser(t, p.URL, "ua")
	admin.loginWithToken("admin@herald.local", apptest.AdminPassword)
	r := admin.do("POST", "/svc/projects/", `{"project":{"meta":{"title":"Sales"}}}`)
	wantStatus(t, r, 201)
	pid := strings.TrimPrefix(r.json(t)["uri"].(string), "/svc/projects/")
	m := &mdClient{t: t, b: admin, pid: pid, md: "/svc/md/" + pid}
	wantStatus(t, m.manage(salesMAQL), 200)
	wantStatus(t, m.load("dataset.stores", "full", storesCSV), 200)
	return p, m
}

// TestLoadOfBadRowsRunsInBoundedMemory loads 100 MiB of rows that are all invalid into
// the real binary and measures its peak resident memory: the load is refused naming the
// first bad row, and costs the process a bounded amount of memory whatever the body's size.
func TestLoadOfBadRowsRunsInBoundedMemory(t *testing.T) {
	gate.Parallel(t)
	p, m := processWorld(t)
	before := p.PeakRSS()
	body := &junkRows{header: "attr.sales.id,fact.sales.amount,attr.stores.id,sold_on.date\n", left: 100 << 20}
	req, _ := http.NewRequest("POST", p.URL+m.md+"/datasets/dataset.sales/data?mode=full", body)
	req.Header.Set("Content-Type", "text/csv")
	began := time.Now()
	res, err := m.b.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(began)
	if res.StatusCode != 400 || !strings.Contains(string(data), `"2"`) || !strings.Contains(string(data), "junk-not-a-number") {
		t.Fatalf("load of bad rows: %d %s\n%s", res.StatusCode, data, p.Out.String())
	}
	peak := p.PeakRSS()
	const bound = 128 << 20
	t.Logf("100 MiB of bad rows: %s; peak RSS %d MiB before the load, %d MiB after", took.Round(time.Millisecond), before>>20, peak>>20)
	if peak-before > bound {
		t.Errorf("the load raised the peak resident memory by %d MiB, more than %d MiB", (peak-before)>>20, bound>>20)
	}
}

// TestDoublingChainRunsInBoundedMemory makes 20 metrics where each adds the one below to
// itself and executes the top one on the real binary: it is computed, right, in bounded
// time and memory.
func TestDoublingChainRunsInBoundedMemory(t *testing.T) {
	gate.Parallel(t)
	p, m := processWorld(t)
	wantStatus(t, m.load("dataset.sales", "full", salesCSV), 200)
	uris := m.uris("fact.sales.amount", "label.stores.name")
	metric := m.create(metricJSON("L0", "SELECT SUM(["+uris["fact.sales.amount"]+"])"))
	for k := 1; k <= 20; k++ {
		metric = m.create(metricJSON(fmt.Sprintf("L%d", k), "SELECT ["+metric+"] + ["+metric+"]"))
	}
	before := p.PeakRSS()
	began := time.Now()
	x := m.run(m.content(gridDef([]any{gridAttr(uris["label.stores.name"])}, []any{"metricGroup"}, []string{metric})))
	took := time.Since(began)
	peak := p.PeakRSS()
	t.Logf("a 20-level doubling chain: %s; peak RSS %d MiB before, %d MiB after", took.Round(time.Millisecond), before>>20, peak>>20)
	var got []float64
	for _, row := range x.Data {
		v, _ := strconv.ParseFloat(*row[0], 64)
		got = append(got, v)
	}
	slices.Sort(got)
	if want := []float64{15.5 * (1 << 20), 20 * (1 << 20)}; !slices.Equal(got, want) {
		t.Fatalf("values %v, want %v", got, want)
	}
	if took > 10*time.Second || peak-before > 128<<20 {
		t.Errorf("took %s and %d MiB more, want under 10s and 128 MiB", took, (peak-before)>>20)
	}
}

// TestOversizeReportNamesTheMetric executes a report whose metric compiles to more SQL
// than execution.maxQueryBytes: a 400 naming the metric.
func TestOversizeReportNamesTheMetric(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t, func(c *app.Config) { c.Execution.MaxSQL = 4096 })
	admin := newBrowser(t, b.URL, "ua")
	admin.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	m := newMD(t, b, admin)
	wantStatus(t, m.manage(salesMAQL), 200)
	var expr strings.Builder
	expr.WriteString("SELECT SUM({fact.sales.amount})")
	for i := range 1000 {
		fmt.Fprintf(&expr, " + %d", i)
	}
	metric := m.create(metricJSON("Sprawling", expr.String()))
	r := m.execute(m.content(gridDef(nil, []any{"metricGroup"}, []string{metric})))
	if r.status != 400 || !strings.Contains(r.body, "is too complex") || !strings.Contains(r.body, "metrics[0]") {
		t.Fatalf("%d %s, want 400 naming the metric", r.status, r.body)
	}
}
