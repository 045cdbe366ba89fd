package analytics

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/internal/clock"
)

// findings runs the checks and returns each finding as "ECAT LEVEL text", per check.
func (f *fixture) findings(t *testing.T, checks ...string) map[string][]string {
	t.Helper()
	v, err := f.s.Validate(context.Background(), f.pid, checks)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	errs := 0
	for _, r := range v.Results {
		out[r.From] = []string{}
		n := 0
		for _, l := range r.Body.Log {
			out[r.From] = append(out[r.From], l.ECat+" "+l.Level+" "+l.Text())
			if l.Level == LevelError {
				n++
			}
		}
		if r.Body.Error != n {
			t.Errorf("%s counts %d errors, its log has %d", r.From, r.Body.Error, n)
		}
		errs += n
	}
	if v.ErrorFound != errs {
		t.Errorf("error_found %d, the logs have %d", v.ErrorFound, errs)
	}
	return out
}

// corrupt changes the stored model as an older version or a broken disk might have left
// it, behind the service's back.
func (f *fixture) corrupt(t *testing.T, change func(m *ldm.Model)) {
	t.Helper()
	ctx := context.Background()
	stored, err := f.st.ProjectModel(ctx, f.pid)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ldm.Decode(stored.Doc)
	if err != nil {
		t.Fatal(err)
	}
	change(m)
	doc, _ := json.Marshal(m)
	c := modelChange(f.pid, f.user, f.s.now(), m, doc)
	// Uses between objects that are gone cannot be stored; the model document keeps them.
	c.Uses = slices.DeleteFunc(c.Uses, func(u [2]string) bool {
		_, from := m.Kind(u[0])
		_, to := m.Kind(u[1])
		return !from || !to
	})
	if _, err := f.st.SaveModel(ctx, c, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// corruptWarehouse runs SQL on the project's warehouse file with the service closed, as
// a broken disk or another program might, and opens the service again.
func (f *fixture) corruptWarehouse(t *testing.T, statements ...string) {
	t.Helper()
	path := f.s.wh.Path(f.pid)
	now := f.s.now
	dir := filepath.Dir(path)
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range statements {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if f.s, err = New(context.Background(), Options{Store: f.st, Dir: dir, Clock: clock.NowFrom(now)}); err != nil {
		t.Fatal(err)
	}
}

func TestValidateCleanProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.devsProject(t, f.pid)
	got := f.findings(t, "io", "LDM", "Pdm", "LDM")
	want := map[string][]string{"io": {}, "ldm": {}, "pdm": {}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("findings %v", got)
	}
	v, _ := f.s.Validate(context.Background(), f.pid, []string{"pdm", "ldm", "io"})
	if v.ErrorFound != 0 || v.FatalErrorFound != 0 || v.Results[0].From != "pdm" || v.Results[2].From != "io" {
		t.Fatalf("validation %+v", v)
	}
	var input *InputError
	if _, err := f.s.Validate(context.Background(), f.pid, []string{"LDM", "XYZ"}); !errors.As(err, &input) {
		t.Fatalf("unknown check: %v", err)
	}
}

func TestValidateLDM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(t *testing.T, f *fixture)
		want    []string
	}{
		{"attribute without keys", func(t *testing.T, f *fixture) {
			f.corrupt(t, func(m *ldm.Model) {
				m.Attributes["attr.devs.team"] = &ldm.Attribute{Meta: ldm.Meta{Title: "Team"}, Dataset: "dataset.devs"}
				m.Datasets["dataset.devs"].Attributes = append(m.Datasets["dataset.devs"].Attributes, "attr.devs.team")
			})
		}, []string{"MISSING ERROR attribute 'Team' has no key"}},
		{"label of a missing attribute", func(t *testing.T, f *fixture) {
			f.corrupt(t, func(m *ldm.Model) {
				m.Labels["label.gone.name"] = &ldm.Label{Meta: ldm.Meta{Title: "Gone"}, Attribute: "attr.gone",
					Column: ldm.Column{Table: "f_devs", Name: "nm_gone"}}
			})
		}, []string{"MISSING ERROR label 'Gone' belongs to attribute {attr.gone}, which does not exist"}},
		{"attribute of a missing dataset", func(t *testing.T, f *fixture) {
			f.corrupt(t, func(m *ldm.Model) { delete(m.Datasets, "dataset.devs") })
		}, []string{
			"MISSING ERROR attribute 'Developer' belongs to dataset {dataset.devs}, which does not exist",
			"DANGLING_REFERENCE WARN dataset 'Commits' references Developer, which was dropped; SYNCHRONIZE it to remove column f_commits.devs_id",
		}},
		{"dataset with nothing in it", func(t *testing.T, f *fixture) {
			f.manage(t, `CREATE DATASET {dataset.plans} VISUAL(TITLE "Plans")`)
		}, []string{"EMPTY WARN dataset 'Plans' has neither attributes nor facts"}},
		{"reference to a dropped dataset", func(t *testing.T, f *fixture) {
			for _, ident := range []string{"report.lines", "rd.lines", "metric.lines", "metric.count"} {
				if err := f.s.DeleteObject(context.Background(), f.pid, idOf(f.uri(t, f.pid, ident))); err != nil {
					t.Fatal(err)
				}
			}
			f.manage(t, "DROP {dataset.devs} CASCADE")
		}, []string{"DANGLING_REFERENCE WARN dataset 'Commits' references {attr.devs.id}, which was dropped; " +
			"SYNCHRONIZE it to remove column f_commits.devs_id"}},
		{"metric using a missing object", func(t *testing.T, f *fixture) {
			f.rewriteContent(t, "metric.lines", func(c string) string {
				return fmt.Sprintf(`{"expression":"SELECT SUM([/svc/md/%s/obj/999999])","format":"#,##0"}`, f.pid)
			})
		}, []string{fmt.Sprintf("INVALID_OBJECT ERROR metric 'Lines' uses /svc/md/%s/obj/999999, which does not exist", "$pid")}},
		{"report definition using a missing metric", func(t *testing.T, f *fixture) {
			metric := f.uri(t, f.pid, "metric.lines")
			f.rewriteContent(t, "rd.lines", func(c string) string { return strings.ReplaceAll(c, metric+`"`, metric+`999"`) })
		}, []string{"INVALID_OBJECT ERROR reportDefinition 'Lines by developer' uses $metric999, which does not exist"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.manage(t, devsScript(t))
			f.reportObjects(t, f.pid)
			metric := f.uri(t, f.pid, "metric.lines")
			tc.breakIt(t, f)
			got := f.findings(t, "LDM")["ldm"]
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = strings.NewReplacer("$pid", f.pid, "$metric", metric).Replace(w)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("findings\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func idOf(uri string) int64 {
	var id int64
	fmt.Sscanf(uri[strings.LastIndex(uri, "/")+1:], "%d", &id)
	return id
}

// rewriteContent replaces the stored content of a user's object, uses and all.
func (f *fixture) rewriteContent(t *testing.T, ident string, change func(string) string) {
	t.Helper()
	ctx := context.Background()
	objs, _ := f.st.ObjectsByIdentifiers(ctx, f.pid, []string{ident})
	o, err := f.st.ObjectByID(ctx, f.pid, objs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	o.Content = []byte(change(string(o.Content)))
	if err := f.st.UpdateObject(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
}

func TestValidatePDM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(t *testing.T, f *fixture)
		want    []string
	}{
		{"column of another type", func(t *testing.T, f *fixture) {
			f.corrupt(t, func(m *ldm.Model) {
				typ, _ := ldm.ParseType("DECIMAL(12,2)")
				m.Types["f_commits.f_lines"] = typ
				setColumnType(m.Tables["f_commits"], "f_lines", typ)
			})
		}, []string{"TYPE_MISMATCH ERROR column f_commits.f_lines is DECIMAL(15,6) in the warehouse, but the model declares DECIMAL(12,2)"}},
		{"missing column", func(t *testing.T, f *fixture) {
			f.corruptWarehouse(t, `ALTER TABLE main.f_devs DROP COLUMN nm_name`)
		}, []string{"MISSING_COLUMN ERROR column f_devs.nm_name of dataset 'Developers' is missing from the warehouse"}},
		{"missing table and elements", func(t *testing.T, f *fixture) {
			f.corruptWarehouse(t, `DROP TABLE main.f_devs`, `DROP TABLE herald."f_devs.id"`)
		}, []string{
			"MISSING_TABLE ERROR table f_devs of dataset 'Developers' is missing from the warehouse",
		}},
		{"missing elements", func(t *testing.T, f *fixture) {
			f.corruptWarehouse(t, `DROP TABLE herald."f_commits.id"`)
		}, []string{"MISSING_TABLE ERROR the elements of key f_commits.id are missing from the warehouse"}},
		{"orphan table", func(t *testing.T, f *fixture) {
			f.corruptWarehouse(t, `CREATE TABLE main.f_old (id VARCHAR)`)
		}, []string{"ORPHAN_TABLE WARN table main.f_old is in the warehouse, but no dataset of the model has it"}},
		{"dataset not synchronized", func(t *testing.T, f *fixture) {
			f.manage(t, `CREATE FACT {fact.commits.files} VISUAL(TITLE "Files") AS {f_commits.f_files};
				ALTER DATASET {dataset.commits} ADD {fact.commits.files}`)
		}, []string{"NOT_SYNCHRONIZED WARN dataset 'Commits' changed since its table was synchronized; SYNCHRONIZE it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.devsProject(t, f.pid)
			tc.breakIt(t, f)
			if got := f.findings(t, "PDM")["pdm"]; !slices.Equal(got, tc.want) {
				t.Fatalf("findings\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func setColumnType(t *ldm.Table, column string, typ ldm.Type) {
	for i := range t.Columns {
		if t.Columns[i].Name == column {
			t.Columns[i].Type = typ
		}
	}
}

func TestValidateIO(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		breakIt func(t *testing.T, f *fixture)
		want    []string
	}{
		{"references to keys no longer loaded", func(t *testing.T, f *fixture) {
			if _, err := f.load("dataset.devs", "id,nm_email,nm_name\nd1,a@x.io,Al\n"); err != nil {
				t.Fatal(err)
			}
		}, []string{"FOREIGN_KEY ERROR 1 rows of dataset 'Commits' reference f_commits.devs_id values that dataset 'Developers' does not have, e.g. d2"}},
		{"duplicate keys", func(t *testing.T, f *fixture) {
			f.corruptWarehouse(t, `INSERT INTO main.f_devs VALUES ('d1', 'again@x.io', 'Again'), ('d2', 'b2@x.io', 'B'), ('d2', 'b3@x.io', 'B')`)
		}, []string{"DUPLICATE_KEY ERROR key f_devs.id of dataset 'Developers' has 2 values in more than one row, e.g. d1"}},
		{"rows without a key", func(t *testing.T, f *fixture) {
			f.corruptWarehouse(t, `INSERT INTO main.f_commits (id, f_lines) VALUES (NULL, 1), (NULL, 2)`)
		}, []string{"NULL_KEY ERROR 2 rows of dataset 'Commits' have no key f_commits.id"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.devsProject(t, f.pid)
			tc.breakIt(t, f)
			if got := f.findings(t, "IO")["io"]; !slices.Equal(got, tc.want) {
				t.Fatalf("findings\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestValidateReportsACheckThatCannotRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.devsProject(t, f.pid)
	// A warehouse file that is not a database cannot be attached.
	path := f.s.wh.Path(f.pid)
	f.s.Close()
	if err := os.WriteFile(path, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.s, err = New(context.Background(), Options{Store: f.st, Dir: filepath.Dir(path), Clock: clock.NowFrom(f.s.now)}); err != nil {
		t.Fatal(err)
	}
	v, err := f.s.Validate(context.Background(), f.pid, []string{"PDM"})
	if err != nil {
		t.Fatal(err)
	}
	if v.FatalErrorFound != 1 || v.ErrorFound != 0 || len(v.Results[0].Body.Log) != 1 ||
		v.Results[0].Body.Log[0].ECat != CatCheckFailed || v.Results[0].Body.Log[0].Level != LevelFatal {
		t.Fatalf("validation %+v", v)
	}
}
