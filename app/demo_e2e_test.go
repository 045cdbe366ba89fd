package app_test

import (
	"context"
	"encoding/csv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
)

// startDemo runs a service with --demo over dir until stop is called, its clock stopped
// half a minute before the demo subscription fires.
func startDemo(t *testing.T, dir string) (a *app.App, out *apptest.SyncBuffer, stop func()) {
	t.Helper()
	return startDemoAt(t, dir, apptest.NewClock(time.Date(2026, 3, 2, 9, 0, 30, 0, time.UTC)))
}

// startDemoAt runs a service with --demo over dir on clock until stop is called.
func startDemoAt(t *testing.T, dir string, clock *apptest.Clock) (a *app.App, out *apptest.SyncBuffer, stop func()) {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Data, cfg.Listen, cfg.Metrics.Listen, cfg.Auth.PasswordCost = dir, "127.0.0.1:0", "127.0.0.1:0", 4
	out = &apptest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{Demo: true, Clock: clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Stdout: out,
		Getenv: func(k string) string {
			if k == "HERALD_ADMIN_PASSWORD" {
				return apptest.AdminPassword
			}
			return ""
		}})
	if err != nil {
		cancel()
		t.Fatalf("start: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service stopped with: %v", err)
		}
	}
	t.Cleanup(stop)
	return a, out, stop
}

var demoProject = regexp.MustCompile(`Created the demo project /svc/projects/([a-z0-9]+)`)

func TestDemo(t *testing.T) {
	gate.Parallel(t)
	dir := t.TempDir()
	// Half a minute before the subscription fires.
	clock := apptest.NewClock(time.Date(2026, 3, 2, 9, 0, 30, 0, time.UTC))
	a, out, stop := startDemoAt(t, dir, clock)
	m := demoProject.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no demo project in the start-up lines:\n%s", out)
	}
	pid := m[1]
	ctx := context.Background()
	admin := client.New(a.URL())
	if _, err := admin.Login(ctx, "admin@herald.local", apptest.AdminPassword); err != nil {
		t.Fatal(err)
	}
	reports, results := executeDemoReports(t, admin, pid)
	revenue, byRegion := demoRevenue(t)
	sum := func(x *client.XTab, col int) float64 {
		var s float64
		for _, row := range x.Data {
			if row[col] != nil {
				v, _ := strconv.ParseFloat(*row[col], 64)
				s += v
			}
		}
		return s
	}
	if x := results["Revenue by region"]; x.OverallSize.Rows != len(byRegion) || !near(sum(x, 0), revenue) {
		t.Errorf("revenue by region: %d rows, total %v; want %d rows, %v", x.OverallSize.Rows, sum(x, 0), len(byRegion), revenue)
	}
	if x := results["Revenue by month"]; x.OverallSize.Rows != 24 || !near(sum(x, 0), revenue) {
		t.Errorf("revenue by month: %d rows, total %v; want 24 rows, %v", x.OverallSize.Rows, sum(x, 0), revenue)
	}
	if x := results["Regions and products"]; x.OverallSize.Columns != 4 || x.OverallSize.Rows < 50 || !near(sum(x, 0), revenue) {
		t.Errorf("regions and products: %+v, revenue %v", x.OverallSize, sum(x, 0))
	}
	metric := checkDemoSubscription(t, a.Store(), pid, reports["Revenue by region"])
	v, format, ok, err := admin.ExecuteMetric(ctx, metric)
	if err != nil || !ok || !near(v, revenue) || format != "#,##0.00" {
		t.Fatalf("revenue metric = %v %q %v %v, want %v", v, format, ok, err, revenue)
	}

	// At the minute the subscription mails the revenue and the report to the outbox.
	clock.Advance(30 * time.Second)
	mail := waitForMail(t, filepath.Join(dir, "outbox"))
	for _, want := range []string{"Revenue so far: ", "application/pdf", "Revenue by region"} {
		if !strings.Contains(mail, want) {
			t.Errorf("the mail has no %q:\n%.2000s", want, mail)
		}
	}

	// A second start of the same folder sets up nothing more.
	stop()
	a, out, _ = startDemoAt(t, dir, clock)
	if strings.Contains(out.String(), "demo project") {
		t.Errorf("second start printed: %s", out)
	}
	owner, err := a.Store().UserByLogin(ctx, "admin@herald.local")
	if err != nil {
		t.Fatal(err)
	}
	if projects, err := a.Store().ListUserProjects(ctx, owner.ID, 0, -1); err != nil || len(projects) != 1 {
		t.Errorf("projects after a restart = %d, %v", len(projects), err)
	}
}

// executeDemoReports executes every report of the demo project and returns the reports'
// URIs and data by title.
func executeDemoReports(t *testing.T, admin *client.Client, pid string) (map[string]string, map[string]*client.XTab) {
	t.Helper()
	ctx := context.Background()
	var list struct {
		Query struct {
			Entries []struct{ Link, Title string }
		}
	}
	if err := admin.Do(ctx, "GET", "/svc/md/"+pid+"/query/reports", nil, &list); err != nil {
		t.Fatal(err)
	}
	reports := map[string]string{}
	for _, e := range list.Query.Entries {
		reports[e.Title] = e.Link
	}
	if len(reports) != 3 {
		t.Fatalf("reports = %v", reports)
	}
	results := map[string]*client.XTab{}
	for title, uri := range reports {
		res, err := admin.ExecuteReport(ctx, uri)
		if err != nil {
			t.Fatalf("%s: %v", title, err)
		}
		x, err := admin.DataResult(ctx, res.Content.DataResult)
		if err != nil || x == nil {
			t.Fatalf("%s: data %v, %v", title, x, err)
		}
		results[title] = x
		if res.Content.ReportView.ReportName != title {
			t.Errorf("report name %q, want %q", res.Content.ReportView.ReportName, title)
		}
	}
	return reports, results
}

// checkDemoSubscription checks the admin's mailbox channel and the subscription that
// mails the report every minute, and returns the metric its condition runs.
func checkDemoSubscription(t *testing.T, st *store.Store, pid, report string) string {
	t.Helper()
	ctx := context.Background()
	owner, err := st.UserByLogin(ctx, "admin@herald.local")
	if err != nil {
		t.Fatal(err)
	}
	channels, err := st.Channels(ctx, owner.ID)
	if err != nil || len(channels) != 1 || channels[0].Kind != "email" || string(channels[0].Config) != `{"to":"admin@herald.local"}` {
		t.Fatalf("channels = %+v, %v", channels, err)
	}
	subs, err := st.Subscriptions(ctx, pid, owner.ID)
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions = %+v, %v", subs, err)
	}
	def := subs[0].Def
	cond, err := jexl.CompileCondition(def.Condition)
	if err != nil || len(cond.Metrics()) != 1 || def.Triggers[0].Cron != "0 * * * * *" || !subs[0].Enabled ||
		len(def.Attachments) != 1 || def.Attachments[0].Report != report || def.Attachments[0].Formats[0] != "PDF" ||
		!strings.HasPrefix(def.Message, "Revenue so far: ${f:executeMetric('") || subs[0].Channels[0] != channels[0].ID {
		t.Fatalf("subscription = %+v (%v)", subs[0], err)
	}
	return cond.Metrics()[0]
}

// waitForMail returns the first mail written to the outbox folder, waiting for the
// delivery worker to write it.
func waitForMail(t *testing.T, dir string) string {
	t.Helper()
	return waitForMailWithin(t, dir, 30*time.Second)
}

// waitForMailWithin is waitForMail with a bound of d.
func waitForMailWithin(t *testing.T, dir string, d time.Duration) string {
	t.Helper()
	var files []string
	waitForWithin(t, d, func() bool {
		files, _ = filepath.Glob(filepath.Join(dir, "*.eml"))
		return len(files) > 0
	})
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readCSV reads a whole CSV file of the demo's.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// demoRevenue sums the demo's sales, in all and by region.
func demoRevenue(t *testing.T) (float64, map[string]float64) {
	t.Helper()
	rows := readCSV(t, "../testdata/demo/sales.csv")
	var total float64
	by := map[string]float64{}
	for _, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		total += v
		by[row[3]] += v
	}
	return total, by
}
