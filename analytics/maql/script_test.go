package maql

import (
	"os"
	"reflect"
	"testing"
)

func TestParseRealisticScript(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/devs.maql")
	if err != nil {
		t.Fatal(err)
	}
	stmts, err := ParseScript(string(src))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}

	var kinds []string
	for _, s := range stmts {
		kinds = append(kinds, reflect.TypeOf(s).Name())
	}
	wantKinds := []string{
		"CreateFolder", "CreateFolder",
		"CreateDataset", "CreateAttribute", "AlterDatasetAdd", "AddLabels", "DefaultLabel", "AlterDatatype",
		"IncludeTemplate",
		"CreateDataset", "CreateAttribute", "CreateFact", "AlterDatatype", "AlterDatasetAdd", "AddKeys", "AddKeys",
		"Synchronize",
	}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Fatalf("statements\n got %v\nwant %v", kinds, wantKinds)
	}

	checks := []struct {
		name string
		got  Stmt
		want Stmt
	}{
		{"labels span two lines", stmts[5], AddLabels{Pos: Pos{Line: 9, Col: 1}, Attribute: "attr.devs.id", Labels: []Label{
			{ID: "label.devs.id.email", Visual: Visual{Title: strp("Email")}, Column: Column{Table: "f_devs", Name: "nm_email"}},
			{ID: "label.devs.id.name", Visual: Visual{Title: strp("Name")}, Column: Column{Table: "f_devs", Name: "nm_name"}},
		}}},
		{"date template", stmts[8], IncludeTemplate{Pos: Pos{Line: 15, Col: 1}, URN: "URN:GOODDATA:DATE",
			Identifier: "committed_on", Title: "Committed On"}},
		{"reference to developers", stmts[14], AddKeys{Pos: Pos{Line: 23, Col: 1}, Attribute: "attr.devs.id",
			Keys: []Key{{Column: Column{Table: "f_commits", Name: "devs_id"}}}}},
		{"reference to the date", stmts[15], AddKeys{Pos: Pos{Line: 24, Col: 1}, Attribute: "committed_on.date",
			Keys: []Key{{Column: Column{Table: "f_commits", Name: "dt_committed_on_id"}}}}},
		{"synchronize empties data", stmts[16], Synchronize{Pos: Pos{Line: 26, Col: 1},
			Datasets: []string{"dataset.devs", "dataset.commits"}}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, c.got, c.want)
		}
	}

	again, err := ParseScript(FormatScript(stmts))
	if err != nil {
		t.Fatalf("ParseScript(FormatScript): %v", err)
	}
	if !reflect.DeepEqual(withoutPos(again), withoutPos(stmts)) {
		t.Fatalf("the formatted script parses differently:\n%s", FormatScript(stmts))
	}
}
