package analytics

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/heraldhq/herald/store"
)

const commitsCSV = "id,f_lines,devs_id,dt_committed_on_id\nc1,10.5,d1,2024-01-31\nc2,3,d2,2024-02-01\nc3,1,d1,2024-02-01\n"

// project creates another project of the fixture's user and returns its id.
func (f *fixture) project(t *testing.T) string {
	t.Helper()
	pid := store.NewID(32)
	now := f.s.now()
	if err := f.st.CreateProject(context.Background(), store.Project{ID: pid, Title: "Q", State: store.ProjectEnabled,
		Author: f.user, Contributor: f.user, Created: now, Updated: now}, "adminRole"); err != nil {
		t.Fatal(err)
	}
	return pid
}

// ident returns the URI of the object with the identifier in the project.
func (f *fixture) uri(t *testing.T, pid, identifier string) string {
	t.Helper()
	objs, err := f.st.ObjectsByIdentifiers(context.Background(), pid, []string{identifier})
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s in %s: %v %v", identifier, pid, objs, err)
	}
	return ObjectURI(pid, objs[0].ID)
}

// create creates a user's object in the project and returns its URI.
func (f *fixture) create(t *testing.T, pid string, in Input) string {
	t.Helper()
	o, err := f.s.CreateObject(context.Background(), pid, f.user, in)
	if err != nil {
		t.Fatalf("create %s: %v", in.Identifier, err)
	}
	return o.URI
}

// devsProject gives the project the devs model, data, and a report on lines by
// developer (report.lines, rd.lines, metric.lines) besides an unrelated metric.count.
func (f *fixture) devsProject(t *testing.T, pid string) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.s.Manage(ctx, pid, f.user, devsScript(t)); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"dataset.devs", devsCSV}, {"dataset.commits", commitsCSV}} {
		if _, err := f.s.Load(ctx, pid, l[0], LoadFull, strings.NewReader(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	f.reportObjects(t, pid)
}

func (f *fixture) reportObjects(t *testing.T, pid string) {
	t.Helper()
	metric := f.create(t, pid, Input{Identifier: "metric.lines", Title: "Lines", Metric: &MetricContent{
		Expression: "SELECT SUM({fact.commits.lines})"}})
	f.create(t, pid, Input{Identifier: "metric.count", Title: "Commits", Metric: &MetricContent{
		Expression: "SELECT COUNT({attr.commits.id})"}})
	attr, email := f.uri(t, pid, "attr.devs.id"), f.uri(t, pid, "label.devs.id.email")
	rd := f.create(t, pid, Input{Identifier: "rd.lines", Title: "Lines by developer", ReportDefinition: &ReportDefinitionContent{
		Grid: Grid{Rows: []GridItem{{Attribute: &GridAttribute{URI: email}}}, Columns: []GridItem{{MetricGroup: true}},
			Metrics: []GridMetric{{URI: metric}}},
		Filters: []Filter{{Expression: fmt.Sprintf("[%s] IN ([%s/elements?id=1])", attr, attr)}},
	}})
	f.create(t, pid, Input{Identifier: "report.lines", Title: "Lines", Report: &ReportContent{Definitions: []string{rd}}})
}

// data returns the rows of every table of the project's warehouse, sorted, by
// "schema.name", read from a snapshot's Parquet files by a DuckDB of the test's own.
func (f *fixture) data(t *testing.T, pid string) map[string][]string {
	t.Helper()
	dir, err := os.MkdirTemp(f.s.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	snap, err := f.s.TakeSnapshot(context.Background(), pid, dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	for _, tb := range snap.Tables {
		rows, err := db.Query("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM read_parquet('" + filepath.Join(dir, tb.File) + "')")
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var parts []string
			for i, v := range vals {
				parts = append(parts, cols[i]+"="+v.String)
			}
			lines = append(lines, strings.Join(parts, "|"))
		}
		rows.Close()
		slices.Sort(lines)
		out[tb.Schema+"."+tb.Name] = lines
	}
	return out
}

// userObjects returns the project's objects outside the model by identifier, with their
// content's URIs of the project written as {identifier}.
func (f *fixture) userObjects(t *testing.T, pid string) map[string]string {
	t.Helper()
	objs, _, err := f.st.ProjectObjects(context.Background(), pid)
	if err != nil {
		t.Fatal(err)
	}
	idents := map[int64]string{}
	for _, o := range objs {
		idents[o.ID] = o.Identifier
	}
	out := map[string]string{}
	for _, o := range objs {
		if o.InModel {
			continue
		}
		content, err := rewriteURIs(o.Content, pid, func(id int64) (string, error) { return "{" + idents[id] + "}", nil })
		if err != nil {
			t.Fatal(err)
		}
		out[o.Identifier] = fmt.Sprintf("%s %q %s", o.Category, o.Title, content)
	}
	return out
}

func TestSnapshotAndRestoreProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.devsProject(t, f.pid)

	dir, err := os.MkdirTemp(f.s.TempDir(), "export")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := f.s.TakeSnapshot(ctx, f.pid, dir)
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot travels as JSON.
	data, _ := json.Marshal(snap)
	var back Snapshot
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}

	target := f.project(t)
	if err := f.s.Restore(ctx, target, f.user, &back, dir); err != nil {
		t.Fatal(err)
	}
	src, dst := f.data(t, f.pid), f.data(t, target)
	if len(src) != 4 || len(src["main.f_commits"]) != 3 {
		t.Fatalf("source data %v", src)
	}
	if !maps.EqualFunc(src, dst, slices.Equal) {
		t.Fatalf("restored data\n%v\nsource\n%v", dst, src)
	}
	if got, want := f.userObjects(t, target), f.userObjects(t, f.pid); !maps.Equal(got, want) {
		t.Fatalf("restored objects\n%v\nsource\n%v", got, want)
	}
	m1, _ := f.s.Model(ctx, f.pid)
	m2, _ := f.s.Model(ctx, target)
	j1, _ := json.Marshal(m1)
	j2, _ := json.Marshal(m2)
	if string(j1) != string(j2) {
		t.Fatalf("restored model\n%s\nsource\n%s", j2, j1)
	}
	// Elements keep their ids, so the filter's element means the same developer.
	if got := f.elementsOf(t, target, "attr.devs.id"); !slices.Equal(got, f.elementsOf(t, f.pid, "attr.devs.id")) {
		t.Fatalf("elements %v", got)
	}
	// The restored objects are valid in their project: each can be saved again as it is.
	for _, ident := range []string{"metric.lines", "rd.lines", "report.lines"} {
		f.resave(t, target, ident)
	}

	if err := f.s.Restore(ctx, target, f.user, &back, dir); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a project with objects: %v", err)
	}
}

// elementsOf lists an attribute's elements as id=title.
func (f *fixture) elementsOf(t *testing.T, pid, attr string) []string {
	t.Helper()
	var id int64
	fmt.Sscanf(f.uri(t, pid, attr), "/svc/md/"+pid+"/obj/%d", &id)
	els, err := f.s.Elements(context.Background(), pid, id, ElementsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range els.Items {
		out = append(out, fmt.Sprintf("%d=%s", e.ID, e.Title))
	}
	return out
}

// resave replaces a user's object with its own content, which the service checks.
func (f *fixture) resave(t *testing.T, pid, ident string) {
	t.Helper()
	ctx := context.Background()
	objs, _ := f.st.ObjectsByIdentifiers(ctx, pid, []string{ident})
	o, err := f.s.Object(ctx, pid, objs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Identifier: o.Identifier, Title: o.Title}
	var target any
	switch o.Category {
	case CategoryMetric:
		in.Metric = &MetricContent{}
		target = in.Metric
	case CategoryReportDefinition:
		in.ReportDefinition = &ReportDefinitionContent{}
		target = in.ReportDefinition
	default:
		in.Report = &ReportContent{}
		target = in.Report
	}
	if err := json.Unmarshal(o.Content, target); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.UpdateObject(ctx, pid, o.ID, f.user, in); err != nil {
		t.Fatalf("%s is not valid in %s: %v", ident, pid, err)
	}
}

func TestRestoreIsAtomic(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.devsProject(t, f.pid)
	dir, _ := os.MkdirTemp(f.s.TempDir(), "export")
	snap, err := f.s.TakeSnapshot(ctx, f.pid, dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		spoil func(s *Snapshot)
	}{
		{"a data file is missing", func(s *Snapshot) { os.Remove(filepath.Join(dir, s.Tables[len(s.Tables)-1].File)) }},
		{"an object uses one the export lacks", func(s *Snapshot) {
			for i, o := range s.Objects {
				if o.Identifier == "rd.lines" {
					s.Objects = slices.Delete(s.Objects, i, i+1)
					return
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spoilt := *snap
			spoilt.Objects = slices.Clone(snap.Objects)
			tc.spoil(&spoilt)
			target := f.project(t)
			if err := f.s.Restore(ctx, target, f.user, &spoilt, dir); err == nil {
				t.Fatal("no error")
			}
			if empty, _ := f.s.Empty(ctx, target); !empty {
				t.Fatal("the project is not empty after a failed restore")
			}
			if tables, err := f.s.wh.Tables(ctx, target); err != nil || len(tables) != 0 {
				t.Fatalf("the warehouse has %v, %v", tables, err)
			}
		})
	}
}

func TestSnapshotObjectsTakesWhatTheyUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.devsProject(t, f.pid)
	snap, err := f.s.SnapshotObjects(ctx, f.pid, []string{f.uri(t, f.pid, "report.lines")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range snap.Objects {
		got = append(got, o.Identifier)
	}
	slices.Sort(got)
	want := []string{"attr.devs.id", "committed_on.dataset.dt", "committed_on.date", "dataset.devs", "dataset.commits", "dim.devs", "fact.commits.lines", "ffld.commits",
		"label.devs.id.email", "metric.lines", "rd.lines", "report.lines"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("snapshot of a report has\n%v\nwant\n%v", got, want)
	}
	if snap.Model != nil || snap.Tables != nil {
		t.Fatal("a snapshot of objects has the model or data")
	}
	for _, uri := range []string{ObjectURI(f.pid, 999999), "/svc/md/other/obj/1", "nonsense"} {
		var missing *MissingObjectError
		if _, err := f.s.SnapshotObjects(ctx, f.pid, []string{uri}); !errors.As(err, &missing) || missing.URI != uri {
			t.Errorf("snapshot of %s: %v", uri, err)
		}
	}
}

func TestRestoreObjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.devsProject(t, f.pid)
	snap, err := f.s.SnapshotObjects(ctx, f.pid, []string{f.uri(t, f.pid, "report.lines")})
	if err != nil {
		t.Fatal(err)
	}
	target := f.project(t)
	if _, err := f.s.Manage(ctx, target, f.user, devsScript(t)); err != nil {
		t.Fatal(err)
	}
	done, err := f.s.RestoreObjects(ctx, target, snap, ObjectsOptions{By: f.user, OverwriteNewer: true})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(done.Created)
	if !slices.Equal(done.Created, []string{"metric.lines", "rd.lines", "report.lines"}) || done.Replaced != nil {
		t.Fatalf("restored %+v", done)
	}
	src, dst := f.userObjects(t, f.pid), f.userObjects(t, target)
	delete(src, "metric.count")
	if !maps.Equal(src, dst) {
		t.Fatalf("restored objects\n%v\nsource\n%v", dst, src)
	}
	for _, ident := range []string{"metric.lines", "rd.lines", "report.lines"} {
		f.resave(t, target, ident)
	}
	// Again: every object is there now and is replaced.
	done, err = f.s.RestoreObjects(ctx, target, snap, ObjectsOptions{By: f.user, OverwriteNewer: true})
	if err != nil || len(done.Replaced) != 3 || done.Created != nil {
		t.Fatalf("restored again: %+v %v", done, err)
	}
}

func TestRestoreObjectsOverwriteNewer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		overwriteNewer bool
		targetLater    bool // the target's metric changed after the export's
		wantTitle      string
	}{
		{"newer target kept", false, true, "Target's"},
		{"newer target replaced", true, true, "Lines"},
		{"older target replaced", false, false, "Lines"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			clock := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
			f.s.now = func() time.Time { return clock }
			target := f.project(t)
			f.manage(t, devsScript(t))
			if _, err := f.s.Manage(ctx, target, f.user, devsScript(t)); err != nil {
				t.Fatal(err)
			}
			mine := Input{Identifier: "metric.lines", Title: "Target's", Metric: &MetricContent{Expression: "SELECT MAX({fact.commits.lines})"}}
			if !tc.targetLater {
				f.create(t, target, mine)
			}
			clock = clock.Add(time.Hour)
			f.create(t, f.pid, Input{Identifier: "metric.lines", Title: "Lines", Metric: &MetricContent{Expression: "SELECT SUM({fact.commits.lines})"}})
			snap, err := f.s.SnapshotObjects(ctx, f.pid, []string{f.uri(t, f.pid, "metric.lines")})
			if err != nil {
				t.Fatal(err)
			}
			clock = clock.Add(time.Hour)
			if tc.targetLater {
				f.create(t, target, mine)
			}
			if _, err := f.s.RestoreObjects(ctx, target, snap, ObjectsOptions{By: f.user, OverwriteNewer: tc.overwriteNewer}); err != nil {
				t.Fatal(err)
			}
			if got := f.userObjects(t, target)["metric.lines"]; !strings.Contains(got, fmt.Sprintf("%q", tc.wantTitle)) {
				t.Fatalf("metric after the import: %s", got)
			}
		})
	}
}

func TestRestoreObjectsUpdateModelMeta(t *testing.T) {
	t.Parallel()
	for _, update := range []bool{false, true} {
		t.Run(fmt.Sprint("update=", update), func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			f.devsProject(t, f.pid)
			snap, err := f.s.SnapshotObjects(ctx, f.pid, []string{f.uri(t, f.pid, "metric.lines")})
			if err != nil {
				t.Fatal(err)
			}
			for i := range snap.Objects {
				if snap.Objects[i].Identifier == "fact.commits.lines" {
					snap.Objects[i].Title, snap.Objects[i].Tags = "Lines Touched", "code"
				}
			}
			target := f.project(t)
			if _, err := f.s.Manage(ctx, target, f.user, devsScript(t)); err != nil {
				t.Fatal(err)
			}
			done, err := f.s.RestoreObjects(ctx, target, snap, ObjectsOptions{By: f.user, OverwriteNewer: true, UpdateModelMeta: update})
			if err != nil {
				t.Fatal(err)
			}
			want := ldmTitle{"Lines Changed", ""}
			if update {
				want = ldmTitle{"Lines Touched", "code"}
				if !slices.Equal(done.ModelMeta, []string{"fact.commits.lines"}) {
					t.Fatalf("model meta changed: %v", done.ModelMeta)
				}
			}
			m, _ := f.s.Model(ctx, target)
			objs, _ := f.st.ObjectsByIdentifiers(ctx, target, []string{"fact.commits.lines"})
			fact := m.Facts["fact.commits.lines"]
			if got := (ldmTitle{fact.Title, fact.Tags}); got != want || objs[0].Title != want.title || objs[0].Tags != want.tags {
				t.Fatalf("fact %+v, object %q %q; want %+v", got, objs[0].Title, objs[0].Tags, want)
			}
		})
	}
}

type ldmTitle struct{ title, tags string }

func TestRestoreObjectsNeedsTheModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.devsProject(t, f.pid)
	snap, err := f.s.SnapshotObjects(ctx, f.pid, []string{f.uri(t, f.pid, "report.lines")})
	if err != nil {
		t.Fatal(err)
	}
	target := f.project(t)
	// The target's model lacks the commits dataset with its fact.
	devsOnly := devsScript(t)[:strings.Index(devsScript(t), "-- The date dimension.")] + "SYNCHRONIZE {dataset.devs}"
	if _, err := f.s.Manage(ctx, target, f.user, devsOnly); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.RestoreObjects(ctx, target, snap, ObjectsOptions{By: f.user, OverwriteNewer: true})
	var missing *MissingObjectError
	if !errors.As(err, &missing) || !strings.HasPrefix(missing.URI, "/svc/md/"+f.pid+"/obj/") {
		t.Fatalf("import without the fact: %v", err)
	}
	if err.Error() != fmt.Sprintf("The object with uri (%s) doesn't exists.", missing.URI) {
		t.Fatalf("message %q", err)
	}
	if objs, _ := f.st.UserObjects(ctx, target); len(objs) != 0 {
		t.Fatalf("objects written: %v", objs)
	}
}
