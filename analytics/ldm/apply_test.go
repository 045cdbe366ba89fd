package ldm

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/heraldhq/herald/analytics/maql"
)

// apply parses and applies src to m.
func apply(t testing.TB, m *Model, src string, opt Options) (*Model, []Step, error) {
	t.Helper()
	stmts, err := maql.ParseScript(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Apply(m, stmts, opt)
}

func devsScript(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile("testdata/devs.maql")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// devsModel is the model of testdata/devs.maql.
func devsModel(t testing.TB) *Model {
	t.Helper()
	m, _, err := apply(t, New(), devsScript(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func typ(s string) Type {
	t, err := ParseType(s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestApplyDevs(t *testing.T) {
	t.Parallel()
	m, steps, err := apply(t, New(), devsScript(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	wantDevs := &Table{Name: "f_devs", Dataset: "dataset.devs", ConnectionPoint: "attr.devs.id", Key: "id", Columns: []TableColumn{
		{Name: "id", Type: DefaultKeyType, Role: RoleKey, Object: "attr.devs.id"},
		{Name: "nm_email", Type: typ("VARCHAR(128)"), Role: RoleLabel, Object: "label.devs.id.email"},
		{Name: "nm_name", Type: DefaultLabelType, Role: RoleLabel, Object: "label.devs.id.name"},
	}}
	wantCommits := &Table{Name: "f_commits", Dataset: "dataset.commits", ConnectionPoint: "attr.commits.id", Key: "id", Columns: []TableColumn{
		{Name: "id", Type: DefaultKeyType, Role: RoleKey, Object: "attr.commits.id"},
		{Name: "f_lines", Type: typ("DECIMAL(15,6)"), Role: RoleFact, Object: "fact.commits.lines"},
		{Name: "devs_id", Type: DefaultKeyType, Role: RoleReference, Object: "attr.devs.id"},
		{Name: "dt_committed_on_id", Type: DateType, Role: RoleReference, Object: "committed_on.date"},
	}}
	if len(steps) != 2 {
		t.Fatalf("steps = %+v, want two creates", steps)
	}
	for i, want := range []*Table{wantDevs, wantCommits} {
		if steps[i].Old != nil || steps[i].Preserve || !reflect.DeepEqual(steps[i].New, want) {
			t.Errorf("step %d = %+v / %+v\nwant create of %+v", i, steps[i], steps[i].New, want)
		}
		if !reflect.DeepEqual(m.Tables[want.Name], want) {
			t.Errorf("synchronized table %s = %+v", want.Name, m.Tables[want.Name])
		}
	}
	if steps[1].Pos.Line != 26 {
		t.Errorf("synchronize step at line %d, want 26", steps[1].Pos.Line)
	}
	date := m.Datasets["committed_on.dataset.dt"]
	if date == nil || date.Date != "committed_on" || date.Title != "Committed On" || len(date.Attributes) != len(DateParts) {
		t.Fatalf("date dimension = %+v", date)
	}
	year := m.Attributes["committed_on.year"]
	if year.DatePart != "year" || year.DefaultLabel != "committed_on.year.yyyy" || m.Labels["committed_on.year.yyyy"].DateFormat != "yyyy" {
		t.Fatalf("year = %+v", year)
	}
	if cp, _ := m.ConnectionPoint("committed_on.dataset.dt"); cp != "committed_on.date" {
		t.Fatalf("date connection point = %q", cp)
	}
	if got := m.Attributes["attr.devs.id"]; got.DefaultLabel != "label.devs.id.email" || got.Folder != "dim.devs" || got.Title != "Developer" {
		t.Fatalf("attr.devs.id = %+v", got)
	}
	if f := m.Facts["fact.commits.lines"]; f.Description != "Lines added and removed" || f.Folder != "ffld.commits" {
		t.Fatalf("fact = %+v", f)
	}
}

func TestApplyLeavesInputAlone(t *testing.T) {
	t.Parallel()
	m := devsModel(t)
	before, _ := json.Marshal(m)
	if _, _, err := apply(t, m, `DROP ALL IN {dataset.commits} CASCADE; CREATE FACT {fact.x} AS {f_devs.f_x}`, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := apply(t, m, `DROP {dataset.devs} CASCADE; DROP {nope}`, Options{}); err == nil {
		t.Fatal("dropping an unknown object succeeded")
	}
	after, _ := json.Marshal(m)
	if string(before) != string(after) {
		t.Fatal("Apply changed its input model")
	}
}

func TestModelJSONRoundTrip(t *testing.T) {
	t.Parallel()
	m := devsModel(t)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatal("model changed through JSON")
	}
	empty, err := Decode(nil)
	if err != nil || !reflect.DeepEqual(empty, New()) {
		t.Fatalf("Decode(nil) = %+v, %v", empty, err)
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  string // applied to the devs model
		line int
		want string
	}{
		{"unknown attribute", "CREATE DATASET {d};\nALTER ATTRIBUTE {attr.x} ADD KEYS {f_x.x_id}", 2, "attribute {attr.x} does not exist"},
		{"wrong kind", "ALTER ATTRIBUTE {fact.commits.lines} DEFAULT LABEL {label.devs.id.email}", 1, "{fact.commits.lines} is a fact, not an attribute"},
		{"duplicate identifier", "CREATE FACT {attr.devs.id} AS {f_devs.f_x}", 1, "attribute {attr.devs.id} already exists"},
		{"duplicate label in one statement", "ALTER ATTRIBUTE {attr.devs.id} ADD LABELS {l.a} AS {f_devs.nm_a}, {l.a} AS {f_devs.nm_b}", 1, "label {l.a} already exists"},
		{"column in use", "CREATE FACT {fact.x} AS {F_DEVS.NM_EMAIL}", 1, "column {f_devs.nm_email} is already used by {label.devs.id.email}"},
		{"reserved column", "CREATE FACT {fact.x} AS {f_devs.rowid}", 1, "rowid is a reserved name"},
		{"folder of the wrong type", "CREATE FACT {fact.x} VISUAL(FOLDER {dim.devs}) AS {f_commits.f_x}", 1, "folder {dim.devs} is TYPE ATTRIBUTE"},
		{"unknown folder", "CREATE ATTRIBUTE {a.x} VISUAL(FOLDER {nope}) AS KEYS {t.x}", 1, "folder {nope} does not exist"},
		{"empty title", `CREATE DATASET {d} VISUAL(TITLE "")`, 1, "TITLE must have 1 to 255 characters"},
		{"fact in another table", "CREATE FACT {fact.x} AS {f_other.f_x};\nALTER DATASET {dataset.devs} ADD {fact.x}", 2, "table f_other, but dataset {dataset.devs} keeps its data in table f_devs"},
		{"table of another dataset", "CREATE DATASET {d};\nCREATE FACT {fact.x} AS {f_devs.f_x};\nALTER DATASET {d} ADD {fact.x}", 3, "table f_devs belongs to dataset {dataset.devs}"},
		{"object in two datasets", "CREATE DATASET {d};\nALTER DATASET {d} ADD {fact.commits.lines}", 2, "already in dataset {dataset.commits}"},
		{"label into a dataset", "ALTER DATASET {dataset.devs} ADD {label.devs.id.name}", 1, "is a label; a dataset holds attributes and facts"},
		{"attribute without key into a dataset", "CREATE ATTRIBUTE {a.x};\nALTER DATASET {dataset.devs} ADD {a.x}", 2, "has no key"},
		{"label in another table", "ALTER ATTRIBUTE {attr.devs.id} ADD LABELS {l.x} AS {f_commits.nm_x}", 1, "must be in table f_devs"},
		{"label of another attribute", "ALTER ATTRIBUTE {attr.commits.id} DEFAULT LABEL {label.devs.id.name}", 1, "is a label of {attr.devs.id}, not of {attr.commits.id}"},
		{"second key in a table", "ALTER ATTRIBUTE {attr.devs.id} ADD KEYS {f_commits.other_id}", 1, "already has key {f_commits.devs_id} in table f_commits"},
		{"fullset reference", "CREATE ATTRIBUTE {a.x} AS KEYS {t.x} FULLSET, {u.x} FULLSET", 1, "only an attribute's first key can"},
		{"keys of a date part", "ALTER ATTRIBUTE {committed_on.year} ADD KEYS {f_devs.dt_x}", 1, "only the date attribute of a date dimension takes keys"},
		{"labels of a date part", "ALTER ATTRIBUTE {committed_on.year} ADD LABELS {l.y} AS {f_devs.nm_y}", 1, "the labels of a date dimension are fixed"},
		{"date dimension twice", `INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "committed_on")`, 1, "dataset {committed_on.dataset.dt} already exists"},
		{"unknown template", `INCLUDE TEMPLATE "URN:OTHER"`, 1, `unknown template "URN:OTHER"`},
		{"datatype of an unused column", "ALTER DATATYPE {f_devs.nope} INT", 1, "column {f_devs.nope} is not used"},
		{"datatype of a reference", "ALTER DATATYPE {f_commits.devs_id} INT", 1, "references {attr.devs.id}; its type follows the key"},
		{"text fact", "ALTER DATATYPE {f_commits.f_lines} VARCHAR(10)", 1, "fact {fact.commits.lines} must be numeric"},
		{"double key", "ALTER DATATYPE {f_devs.id} DOUBLE", 1, "cannot be DOUBLE"},
		{"reference to a non connection point", "CREATE ATTRIBUTE {a.x} AS KEYS {f_devs.x};\nALTER DATASET {dataset.devs} ADD {a.x};\nALTER ATTRIBUTE {a.x} ADD KEYS {f_commits.x_id};\nSYNCHRONIZE {dataset.commits}", 4, "{f_commits.x_id} is a key of {a.x}, which is not the connection point"},
		{"key outside the dataset", "CREATE ATTRIBUTE {a.x} AS KEYS {f_devs.x};\nSYNCHRONIZE {dataset.devs}", 2, "attribute {a.x} has its key {f_devs.x} in table f_devs but is not in dataset {dataset.devs}"},
		{"drop of an unknown object", "DROP {nope}", 1, "object {nope} does not exist"},
		{"drop of a non-empty dataset", "DROP {dataset.devs}", 1, "dataset {dataset.devs} is not empty"},
		{"drop of an attribute with labels", "DROP {attr.devs.id}", 1, "has labels ({label.devs.id.email})"},
		{"drop of a referenced attribute", "ALTER DATASET {dataset.commits} DROP {attr.commits.id};\nALTER ATTRIBUTE {attr.commits.id} ADD KEYS {f_devs.commit_id};\nDROP {attr.commits.id}", 3, "is referenced by {f_devs.commit_id}"},
		{"drop all in a referenced dataset", "DROP ALL IN {dataset.devs}", 1, "is referenced by {f_commits.devs_id}"},
		{"drop of a folder with members", "DROP {dim.devs}", 1, "folder {dim.devs} holds {attr.devs.id}"},
		{"drop of a date part", "DROP {committed_on.year} CASCADE", 1, "part of the date dimension {committed_on.dataset.dt}"},
		{"change of a date dimension", "ALTER DATASET {committed_on.dataset.dt} ADD {fact.commits.lines}", 1, "the date dimension {committed_on.dataset.dt} cannot be changed"},
		{"drop from the wrong dataset", "ALTER DATASET {dataset.devs} DROP {fact.commits.lines}", 1, "is not in dataset {dataset.devs}"},
	}
	base := devsModel(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := apply(t, base, tc.src, Options{})
			var se *StmtError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *StmtError", err)
			}
			if se.Pos.Line != tc.line || !strings.Contains(se.Msg, tc.want) {
				t.Fatalf("error %q at line %d, want %q at line %d", se.Msg, se.Pos.Line, tc.want, tc.line)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("Error() = %q", err.Error())
			}
		})
	}
}

func TestApplyOptions(t *testing.T) {
	t.Parallel()
	base := devsModel(t)
	opt := Options{
		Reserved: func(id string) bool { return id == "metric.revenue" },
		UsedBy: func(id string) string {
			if id == "fact.commits.lines" {
				return `metric "Lines" (/svc/md/p/obj/9)`
			}
			return ""
		},
	}
	cases := []struct{ name, src, want string }{
		{"reserved identifier", "CREATE DATASET {metric.revenue}", "identifier {metric.revenue} is taken by another object"},
		{"drop of a used fact", "DROP {fact.commits.lines}", `fact {fact.commits.lines} is used by metric "Lines" (/svc/md/p/obj/9)`},
		{"cascade over a used fact", "DROP ALL IN {dataset.commits}", `fact {fact.commits.lines} is used by metric "Lines"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := apply(t, base, tc.src, opt); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestApplyDrops(t *testing.T) {
	t.Parallel()
	base := devsModel(t)
	t.Run("drop all in drops the table and the objects", func(t *testing.T) {
		m, steps, err := apply(t, base, "DROP ALL IN {dataset.commits}", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 1 || steps[0].New != nil || steps[0].Old.Name != "f_commits" {
			t.Fatalf("steps = %+v", steps)
		}
		if m.Datasets["dataset.commits"] != nil || m.Attributes["attr.commits.id"] != nil || m.Facts["fact.commits.lines"] != nil || m.Tables["f_commits"] != nil {
			t.Fatal("commits objects left behind")
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cascade drops references and labels", func(t *testing.T) {
		m, steps, err := apply(t, base, "DROP {dataset.devs} CASCADE;\nSYNCHRONIZE {dataset.commits} PRESERVE DATA", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Labels["label.devs.id.email"] != nil || m.Attributes["attr.devs.id"] != nil {
			t.Fatal("devs objects left behind")
		}
		if len(steps) != 2 || steps[0].New != nil || !steps[1].Preserve {
			t.Fatalf("steps = %+v", steps)
		}
		if _, ok := steps[1].New.Column("devs_id"); ok {
			t.Fatal("the reference to the dropped dataset is still in the layout")
		}
		if _, ok := steps[1].Old.Column("devs_id"); !ok {
			t.Fatal("the old layout lost the reference")
		}
	})
	t.Run("dropping a label moves the default", func(t *testing.T) {
		m, _, err := apply(t, base, "DROP {label.devs.id.email}", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Attributes["attr.devs.id"]; got.DefaultLabel != "label.devs.id.name" || len(got.Labels) != 1 {
			t.Fatalf("attribute = %+v", got)
		}
	})
	t.Run("folder cascade keeps the objects", func(t *testing.T) {
		m, _, err := apply(t, base, "DROP {dim.devs} CASCADE", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Attributes["attr.devs.id"] == nil || m.Attributes["attr.devs.id"].Folder != "" {
			t.Fatalf("attribute = %+v", m.Attributes["attr.devs.id"])
		}
	})
	t.Run("date dimension", func(t *testing.T) {
		if _, _, err := apply(t, base, "DROP ALL IN {committed_on.dataset.dt}", Options{}); err == nil ||
			!strings.Contains(err.Error(), "referenced by {f_commits.dt_committed_on_id}") {
			t.Fatalf("drop of a referenced date dimension: %v", err)
		}
		m, _, err := apply(t, base, "DROP ALL IN {committed_on.dataset.dt} CASCADE", Options{})
		if err != nil {
			t.Fatal(err)
		}
		for id := range m.Labels {
			if strings.HasPrefix(id, "committed_on.") {
				t.Fatalf("label %s left behind", id)
			}
		}
	})
	t.Run("emptied dataset forgets an unsynchronized table", func(t *testing.T) {
		m, _, err := apply(t, base, `CREATE DATASET {d};
CREATE FACT {f.a} AS {t_a.f_a};
ALTER DATASET {d} ADD {f.a};
ALTER DATASET {d} DROP {f.a};
CREATE FACT {f.b} AS {t_b.f_b};
ALTER DATASET {d} ADD {f.b}`, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Datasets["d"].Table != "t_b" {
			t.Fatalf("table = %q", m.Datasets["d"].Table)
		}
	})
}

func TestSynchronizeSteps(t *testing.T) {
	t.Parallel()
	base := devsModel(t)
	m, steps, err := apply(t, base, `ALTER DATATYPE {f_devs.id} INT;
CREATE FACT {fact.devs.age} AS {f_devs.f_age};
ALTER DATASET {dataset.devs} ADD {fact.devs.age};
SYNCHRONIZE {dataset.devs} PRESERVE DATA;
SYNCHRONIZE {committed_on.dataset.dt}`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || !steps[0].Preserve || steps[0].Pos.Line != 4 {
		t.Fatalf("steps = %+v", steps)
	}
	if !reflect.DeepEqual(steps[0].Old, base.Tables["f_devs"]) {
		t.Fatal("old layout is not the synchronized one")
	}
	id, _ := steps[0].New.Column("id")
	age, _ := steps[0].New.Column("f_age")
	if id.Type != typ("INT") || age.Type != DefaultFactType || age.Role != RoleFact {
		t.Fatalf("new layout = %+v", steps[0].New)
	}
	// The reference in f_commits follows the key's type once commits is synchronized again.
	if ref, _ := m.Tables["f_commits"].Column("devs_id"); ref.Type != DefaultKeyType {
		t.Fatalf("unsynchronized reference changed: %+v", ref)
	}
	layout, err := m.Layout("dataset.commits")
	if err != nil {
		t.Fatal(err)
	}
	if ref, _ := layout.Column("devs_id"); ref.Type != typ("INT") {
		t.Fatalf("reference type = %v", ref.Type)
	}
}

func TestDependencies(t *testing.T) {
	t.Parallel()
	m := devsModel(t)
	deps := m.Dependencies()
	want := []Dependency{
		{"attr.devs.id", "dataset.devs"}, {"attr.devs.id", "dim.devs"}, {"dataset.commits", "attr.devs.id"},
		{"dataset.commits", "committed_on.date"}, {"fact.commits.lines", "dataset.commits"}, {"label.devs.id.email", "attr.devs.id"},
	}
	for _, w := range want {
		found := false
		for _, d := range deps {
			found = found || d == w
		}
		if !found {
			t.Errorf("missing dependency %+v", w)
		}
	}
	objs := m.Objects()
	if len(objs) != len(m.Folders)+len(m.Datasets)+len(m.Attributes)+len(m.Labels)+len(m.Facts) || objs[0].Kind != KindFolder {
		t.Fatalf("objects = %+v", objs)
	}
}

func TestParseType(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"INT", "BIGINT", "DOUBLE", "DATE", "VARCHAR(12)", "DECIMAL(15,6)"} {
		got, err := ParseType(s)
		if err != nil || got.String() != s {
			t.Errorf("ParseType(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "TEXT", "VARCHAR", "VARCHAR(0)", "DECIMAL(3,4)", "INT(2)", "DECIMAL(1"} {
		if _, err := ParseType(s); err == nil {
			t.Errorf("ParseType(%q) succeeded", s)
		}
	}
}

func FuzzApply(f *testing.F) {
	f.Add("DROP ALL IN {dataset.commits} CASCADE; SYNCHRONIZE {dataset.devs}")
	f.Add("CREATE DATASET {d}; CREATE ATTRIBUTE {a} AS KEYS {t.id} FULLSET; ALTER DATASET {d} ADD {a}; ALTER ATTRIBUTE {a} ADD KEYS {f_commits.a_id}; SYNCHRONIZE {d}, {dataset.commits} PRESERVE DATA")
	f.Add(`INCLUDE TEMPLATE "URN:GOODDATA:DATE"; ALTER ATTRIBUTE {date.date} ADD KEYS {f_devs.dt_id}; SYNCHRONIZE {dataset.devs}`)
	base := devsModel(f)
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := maql.ParseScript(src)
		if err != nil {
			return
		}
		m, steps, err := Apply(base, stmts, Options{})
		if err != nil {
			var se *StmtError
			if !errors.As(err, &se) || se.Pos.Line < 1 {
				t.Fatalf("error %v is not a positioned *StmtError", err)
			}
			return
		}
		if err := m.Check(); err != nil {
			t.Fatalf("Apply(%q) made an invalid model: %v", src, err)
		}
		for _, s := range steps {
			if s.Old == nil && s.New == nil {
				t.Fatalf("Apply(%q): empty step", src)
			}
		}
		data, _ := json.Marshal(m)
		back, err := Decode(data)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("Apply(%q): model does not survive JSON: %v", src, err)
		}
	})
}
