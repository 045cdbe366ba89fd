package maql

import (
	"reflect"
	"testing"
)

func strp(s string) *string { return &s }

var at11 = Pos{Line: 1, Col: 1}

// scriptCases hold one statement each, in every form the language has.
var scriptCases = []struct {
	name string
	src  string
	want Stmt
}{
	{
		name: "create folder of attributes",
		src:  `CREATE FOLDER {dim.x} VISUAL(TITLE "X") TYPE ATTRIBUTE;`,
		want: CreateFolder{Pos: at11, ID: "dim.x", Visual: Visual{Title: strp("X")}, Type: FolderAttribute},
	},
	{
		name: "create folder of facts, lower case",
		src:  `create folder {ffld.commits} visual(title "Commits") type fact`,
		want: CreateFolder{Pos: at11, ID: "ffld.commits", Visual: Visual{Title: strp("Commits")}, Type: FolderFact},
	},
	{
		name: "create dataset",
		src:  `CREATE DATASET {dataset.devs} VISUAL(TITLE "Developers");`,
		want: CreateDataset{Pos: at11, ID: "dataset.devs", Visual: Visual{Title: strp("Developers")}},
	},
	{
		name: "create dataset without visual",
		src:  `CREATE DATASET {dataset.devs}`,
		want: CreateDataset{Pos: at11, ID: "dataset.devs"},
	},
	{
		name: "include template",
		src:  `INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "committed_on", TITLE "Committed On");`,
		want: IncludeTemplate{Pos: at11, URN: "URN:GOODDATA:DATE", Identifier: "committed_on", Title: "Committed On"},
	},
	{
		name: "include template without modify",
		src:  `INCLUDE TEMPLATE "URN:GOODDATA:DATE"`,
		want: IncludeTemplate{Pos: at11, URN: "URN:GOODDATA:DATE"},
	},
	{
		name: "create attribute",
		src:  `CREATE ATTRIBUTE {attr.devs.id} VISUAL(TITLE "Dev", FOLDER {dim.x}) AS KEYS {f_devs.id} FULLSET;`,
		want: CreateAttribute{Pos: at11, ID: "attr.devs.id",
			Visual: Visual{Title: strp("Dev"), Folder: strp("dim.x")},
			Keys:   []Key{{Column: Column{Table: "f_devs", Name: "id"}, Fullset: true}}},
	},
	{
		name: "create attribute with several keys",
		src:  `CREATE ATTRIBUTE {attr.a} AS KEYS {d_a.id} FULLSET, {f_b.a_id}, {f_c.a_id} FULLSET`,
		want: CreateAttribute{Pos: at11, ID: "attr.a", Keys: []Key{
			{Column: Column{Table: "d_a", Name: "id"}, Fullset: true},
			{Column: Column{Table: "f_b", Name: "a_id"}},
			{Column: Column{Table: "f_c", Name: "a_id"}, Fullset: true},
		}},
	},
	{
		name: "create attribute without keys",
		src:  `CREATE ATTRIBUTE {attr.a} VISUAL(TITLE "A")`,
		want: CreateAttribute{Pos: at11, ID: "attr.a", Visual: Visual{Title: strp("A")}},
	},
	{
		name: "visual with every option in any order",
		src:  `CREATE DATASET {d} VISUAL(TAGS "a b", FOLDER {f.x}, DESCRIPTION "Say \"hi\" \\ bye", TITLE "")`,
		want: CreateDataset{Pos: at11, ID: "d", Visual: Visual{
			Title: strp(""), Description: strp(`Say "hi" \ bye`), Folder: strp("f.x"), Tags: strp("a b")}},
	},
	{
		name: "alter dataset add",
		src:  `ALTER DATASET {dataset.devs} ADD {attr.devs.id};`,
		want: AlterDatasetAdd{Pos: at11, Dataset: "dataset.devs", Objects: []string{"attr.devs.id"}},
	},
	{
		name: "alter dataset add list",
		src:  `ALTER DATASET {dataset.commits} ADD {fact.commits.lines}, {attr.commits.id}`,
		want: AlterDatasetAdd{Pos: at11, Dataset: "dataset.commits", Objects: []string{"fact.commits.lines", "attr.commits.id"}},
	},
	{
		name: "alter dataset drop",
		src:  `ALTER DATASET {dataset.devs} DROP {attr.x}`,
		want: AlterDatasetDrop{Pos: at11, Dataset: "dataset.devs", Objects: []string{"attr.x"}},
	},
	{
		name: "add labels",
		src:  `ALTER ATTRIBUTE {attr.devs.id} ADD LABELS {label.devs.id.email} VISUAL(TITLE "Email") AS {f_devs.nm_email};`,
		want: AddLabels{Pos: at11, Attribute: "attr.devs.id", Labels: []Label{
			{ID: "label.devs.id.email", Visual: Visual{Title: strp("Email")}, Column: Column{Table: "f_devs", Name: "nm_email"}},
		}},
	},
	{
		name: "add several labels",
		src: `ALTER ATTRIBUTE {attr.devs.id} ADD LABELS {label.devs.id.email} VISUAL(TITLE "Email") AS {f_devs.nm_email},
			{label.devs.id.name} AS {f_devs.nm_name}`,
		want: AddLabels{Pos: at11, Attribute: "attr.devs.id", Labels: []Label{
			{ID: "label.devs.id.email", Visual: Visual{Title: strp("Email")}, Column: Column{Table: "f_devs", Name: "nm_email"}},
			{ID: "label.devs.id.name", Column: Column{Table: "f_devs", Name: "nm_name"}},
		}},
	},
	{
		name: "alter labels",
		src:  `ALTER ATTRIBUTE {attr.a} ALTER LABELS {label.a} VISUAL(TITLE "Name"), {label.b} VISUAL(DESCRIPTION "")`,
		want: AlterLabels{Pos: at11, Attribute: "attr.a", Labels: []LabelVisual{
			{ID: "label.a", Visual: Visual{Title: strp("Name")}},
			{ID: "label.b", Visual: Visual{Description: strp("")}},
		}},
	},
	{
		name: "default label",
		src:  `ALTER ATTRIBUTE {attr.devs.id} DEFAULT LABEL {label.devs.id.email};`,
		want: DefaultLabel{Pos: at11, Attribute: "attr.devs.id", Label: "label.devs.id.email"},
	},
	{
		name: "create fact",
		src:  `CREATE FACT {fact.commits.lines} VISUAL(TITLE "Lines Changed", DESCRIPTION "...") AS {f_commits.f_lines};`,
		want: CreateFact{Pos: at11, ID: "fact.commits.lines",
			Visual: Visual{Title: strp("Lines Changed"), Description: strp("...")},
			Column: Column{Table: "f_commits", Name: "f_lines"}},
	},
	{
		name: "add keys: a reference",
		src:  `ALTER ATTRIBUTE {attr.devs.id} ADD KEYS {f_commits.devs_id};`,
		want: AddKeys{Pos: at11, Attribute: "attr.devs.id", Keys: []Key{{Column: Column{Table: "f_commits", Name: "devs_id"}}}},
	},
	{
		name: "add keys: a date",
		src:  `ALTER ATTRIBUTE {committed_on.date} ADD KEYS {f_commits.dt_committed_on_id}, {f_x.d} FULLSET`,
		want: AddKeys{Pos: at11, Attribute: "committed_on.date", Keys: []Key{
			{Column: Column{Table: "f_commits", Name: "dt_committed_on_id"}},
			{Column: Column{Table: "f_x", Name: "d"}, Fullset: true},
		}},
	},
	{
		name: "datatype decimal",
		src:  `ALTER DATATYPE {f_commits.f_lines} DECIMAL(15,6);`,
		want: AlterDatatype{Pos: at11, Column: Column{Table: "f_commits", Name: "f_lines"},
			Type: DataType{Name: TypeDecimal, Precision: 15, Scale: 6}},
	},
	{
		name: "datatype varchar",
		src:  `ALTER DATATYPE {f_devs.nm_email} varchar ( 128 )`,
		want: AlterDatatype{Pos: at11, Column: Column{Table: "f_devs", Name: "nm_email"}, Type: DataType{Name: TypeVarchar, Length: 128}},
	},
	{
		name: "datatype int",
		src:  `ALTER DATATYPE {f.c} INT`,
		want: AlterDatatype{Pos: at11, Column: Column{Table: "f", Name: "c"}, Type: DataType{Name: TypeInt}},
	},
	{
		name: "datatype bigint",
		src:  `ALTER DATATYPE {f.c} BIGINT`,
		want: AlterDatatype{Pos: at11, Column: Column{Table: "f", Name: "c"}, Type: DataType{Name: TypeBigint}},
	},
	{
		name: "datatype double",
		src:  `ALTER DATATYPE {f.c} Double`,
		want: AlterDatatype{Pos: at11, Column: Column{Table: "f", Name: "c"}, Type: DataType{Name: TypeDouble}},
	},
	{
		name: "datatype date",
		src:  `ALTER DATATYPE {f.c} DATE`,
		want: AlterDatatype{Pos: at11, Column: Column{Table: "f", Name: "c"}, Type: DataType{Name: TypeDate}},
	},
	{
		name: "synchronize",
		src:  `SYNCHRONIZE {dataset.devs}, {dataset.commits};`,
		want: Synchronize{Pos: at11, Datasets: []string{"dataset.devs", "dataset.commits"}},
	},
	{
		name: "synchronize preserve data",
		src:  `SYNCHRONIZE {dataset.devs} PRESERVE DATA`,
		want: Synchronize{Pos: at11, Datasets: []string{"dataset.devs"}, PreserveData: true},
	},
	{
		name: "drop",
		src:  `DROP {label.x};`,
		want: Drop{Pos: at11, ID: "label.x"},
	},
	{
		name: "drop cascade",
		src:  `DROP {x} CASCADE`,
		want: Drop{Pos: at11, ID: "x", Cascade: true},
	},
	{
		name: "drop all in",
		src:  `DROP ALL IN {dataset.q}`,
		want: DropAllIn{Pos: at11, Dataset: "dataset.q"},
	},
	{
		name: "drop all in cascade",
		src:  `DROP ALL IN {dataset.q} CASCADE;`,
		want: DropAllIn{Pos: at11, Dataset: "dataset.q", Cascade: true},
	},
}

func TestParseScriptStatements(t *testing.T) {
	t.Parallel()
	for _, tc := range scriptCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseScript(tc.src)
			if err != nil {
				t.Fatalf("ParseScript: %v", err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Fatalf("ParseScript(%q)\n got %#v\nwant %#v", tc.src, got, tc.want)
			}
		})
	}
}

func TestScriptRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range scriptCases {
		t.Run(tc.name, func(t *testing.T) {
			first, err := ParseScript(tc.src)
			if err != nil {
				t.Fatalf("ParseScript: %v", err)
			}
			text := FormatScript(first)
			second, err := ParseScript(text)
			if err != nil {
				t.Fatalf("ParseScript(%q): %v", text, err)
			}
			if !reflect.DeepEqual(withoutPos(first), withoutPos(second)) {
				t.Fatalf("round trip through %q\n got %#v\nwant %#v", text, second, first)
			}
		})
	}
}

func TestStatementString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"folder", `create folder {dim.x} visual(title "X") type attribute`, `CREATE FOLDER {dim.x} VISUAL(TITLE "X") TYPE ATTRIBUTE`},
		{"visual order", `CREATE DATASET {d} VISUAL(TAGS "t", TITLE "a\"b")`, `CREATE DATASET {d} VISUAL(TITLE "a\"b", TAGS "t")`},
		{"template", `INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (TITLE "T", IDENTIFIER "d")`,
			`INCLUDE TEMPLATE "URN:GOODDATA:DATE" MODIFY (IDENTIFIER "d", TITLE "T")`},
		{"keys", `CREATE ATTRIBUTE {a} AS KEYS {t.id} FULLSET,{u.a_id}`, `CREATE ATTRIBUTE {a} AS KEYS {t.id} FULLSET, {u.a_id}`},
		{"labels", `ALTER ATTRIBUTE {a} ADD LABELS {l} VISUAL(TITLE "L") AS {t.c}`, `ALTER ATTRIBUTE {a} ADD LABELS {l} VISUAL(TITLE "L") AS {t.c}`},
		{"decimal", `ALTER DATATYPE {t.c} decimal(15, 6)`, `ALTER DATATYPE {t.c} DECIMAL(15,6)`},
		{"synchronize", `synchronize {a},{b} preserve data`, `SYNCHRONIZE {a}, {b} PRESERVE DATA`},
		{"drop all", `drop all in {d} cascade`, `DROP ALL IN {d} CASCADE`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stmts, err := ParseScript(tc.src)
			if err != nil {
				t.Fatalf("ParseScript: %v", err)
			}
			if got := stmts[0].String(); got != tc.want {
				t.Fatalf("String() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseScriptSeparatorsAndComments(t *testing.T) {
	t.Parallel()
	src := "-- a model\n" +
		"CREATE DATASET {d.a} /* first */ ;;\n" +
		"\n" +
		"  /* a block\n   over lines */ DROP {x} -- trailing\n" +
		";\tSYNCHRONIZE {d.a}"
	got, err := ParseScript(src)
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	want := []Stmt{
		CreateDataset{Pos: Pos{Line: 2, Col: 1}, ID: "d.a"},
		Drop{Pos: Pos{Line: 5, Col: 18}, ID: "x"},
		Synchronize{Pos: Pos{Line: 6, Col: 3}, Datasets: []string{"d.a"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
	if got[1].Position() != (Pos{Line: 5, Col: 18}) {
		t.Fatalf("Position() = %+v", got[1].Position())
	}
}

func TestParseScriptEmpty(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "  \n", ";", "-- nothing\n/* at all */;;"} {
		got, err := ParseScript(src)
		if err != nil || len(got) != 0 {
			t.Errorf("ParseScript(%q) = %v, %v; want no statements", src, got, err)
		}
	}
}

// withoutPos returns copies of the statements with their positions cleared.
func withoutPos(stmts []Stmt) []Stmt {
	out := make([]Stmt, len(stmts))
	for i, s := range stmts {
		v := reflect.New(reflect.TypeOf(s)).Elem()
		v.Set(reflect.ValueOf(s))
		v.FieldByName("Pos").Set(reflect.ValueOf(Pos{}))
		out[i] = v.Interface().(Stmt)
	}
	return out
}
