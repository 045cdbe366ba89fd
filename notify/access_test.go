package notify

import (
	"testing"
)

// TestDecide: the decision checks membership, then the permissions, then
// each object, and says why it refuses.
func TestDecide(t *testing.T) {
	t.Parallel()
	viewer := Standing{ProjectID: "p1", UserID: "u1", Member: true, Level: LevelView, perms: Permissions([]string{RoleViewer})}
	dashboard := Standing{ProjectID: "p1", UserID: "u1", Member: true, Level: LevelView, perms: Permissions([]string{RoleDashboard})}
	roleless := Standing{ProjectID: "p1", UserID: "u1", Member: true, Level: LevelNone}
	admin := Standing{ProjectID: "p1", UserID: "u1", DomainAdmin: true, Level: LevelNone}
	report := Report("/svc/md/p1/obj/12", "attachments[0].report")
	metric := Metric("/svc/md/p1/obj/7", "condition")
	objects := map[string]Object{
		report.URI: {URI: report.URI, Found: true, Category: "report"},
		metric.URI: {URI: metric.URI, Found: true, Category: "metric"},
	}
	fire := Needs{Member: true, Execute: true, Export: true, Objects: []Named{metric, report}}
	cases := []struct {
		name    string
		s       Standing
		n       Needs
		objects map[string]Object
		want    string // the reason, "" when allowed
	}{
		{"a viewer fires", viewer, fire, objects, ""},
		{"a stranger", Standing{ProjectID: "p1", UserID: "u1", Level: LevelNone}, Needs{Execute: true}, nil,
			"owner is not a member of the project"},
		{"a domain admin calls the API", admin, Needs{Execute: true, Export: true, Objects: []Named{report}}, objects, ""},
		{"a domain admin owns no subscription of a project he is not in", admin, fire, objects, "owner is not a member of the project"},
		{"no role", roleless, fire, objects, "owner may not execute reports"},
		{"dashboards only, exporting", dashboard, fire, objects, "owner may not export reports"},
		{"dashboards only, an alert", dashboard, Needs{Member: true, Execute: true, Objects: []Named{metric}}, objects, ""},
		{"a deleted report", viewer, fire, map[string]Object{metric.URI: objects[metric.URI]}, "report 12 is not readable by the owner"},
		{"a report that is a metric", viewer, Needs{Member: true, Execute: true, Export: true, Objects: []Named{Report(metric.URI, "x")}},
			objects, "report 7 is not readable by the owner"},
	}
	for _, tc := range cases {
		r := Decide(tc.s, tc.n, tc.objects)
		got := ""
		if r != nil {
			got = r.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRolesLevelsAndPermissions: the roles' permissions are unions, and
// every role sees the project.
func TestRolesLevelsAndPermissions(t *testing.T) {
	t.Parallel()
	if got := Permissions([]string{RoleDashboard, RoleViewer, "noSuchRole"}); len(got) != 4 {
		t.Errorf("viewer and dashboard permissions: %v", got)
	}
	for _, r := range Roles() {
		if r.Level > LevelView {
			t.Errorf("role %s does not see the project", r.Identifier)
		}
		if got, ok := RoleByID(r.ID); !ok || got.Identifier != r.Identifier {
			t.Errorf("role %s by id: %+v", r.ID, got)
		}
	}
}
