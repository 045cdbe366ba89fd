package herald

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/heraldhq/herald"

// ground is below the leaves: every package may import it.
var ground = []string{"internal/clock"}

// leaves import nothing of Herald but the ground.
var leaves = []string{
	"secret", "client", "channels", "engine/cron", "engine/jexl", "internal/gather", "internal/startstop", "internal/configtest", "internal/paralleltest", "internal/scratch", "internal/natstest",
	"internal/httpguard", "internal/logging", "analytics/maql", "analytics/grid", "analytics/numfmt", "wire",
}

// floor says which packages of Herald the packages it names may import. A name
// ending in "/..." names a folder and every package under it.
type floor struct {
	pkgs, may []string
}

// floors is docs/architecture.md's table; the first floor naming a package
// rules it.
var floors = []floor{
	{pkgs: []string{"."}, may: nil},
	{pkgs: ground, may: nil},
	{pkgs: []string{"internal/clock/clocktest"}, may: ground},
	{pkgs: leaves, may: nil},
	{pkgs: []string{"internal/httpserve"}, may: leaves},
	{pkgs: []string{"store"}, may: []string{"channels"}},
	{pkgs: []string{"channels/..."}, may: []string{"channels", "channels/egress", "channels/channeltest", "engine/jexl"}},
	{pkgs: []string{"analytics/...", "analytics"}, may: with(leaves, "store", "analytics", "analytics/...")},
	{pkgs: []string{"notify"}, may: with(leaves, "store")},
	{pkgs: []string{"replica", "backup"}, may: with(leaves, "store")},
	{pkgs: []string{"engine"}, may: with(leaves, "notify", "store", "analytics/render")},
	{pkgs: []string{"worker"}, may: with(leaves, "store")},
	{pkgs: []string{"api"}, may: with(leaves, "notify", "store", "engine", "analytics", "analytics/...", "internal/httpserve")},
	{pkgs: []string{"console"}, may: leaves},
	{pkgs: []string{"bench/internal/..."}, may: []string{"channels/channeltest"}},
	{pkgs: []string{"app", "app/apptest", "bench/..."}, may: []string{"..."}},
	{pkgs: []string{"cmd/herald"}, may: []string{"app"}},
}

func with(base []string, more ...string) []string {
	return append(slices.Clone(base), more...)
}

// names says whether pattern names the package p.
func names(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(p, dir+"/")
	}
	return pattern == p
}

// allows says whether a package on f may import imp.
func (f floor) allows(imp string) bool {
	return slices.Contains(ground, imp) || slices.ContainsFunc(f.may, func(n string) bool { return names(n, imp) })
}

func floorOf(p string) (floor, bool) {
	for _, f := range floors {
		if slices.ContainsFunc(f.pkgs, func(n string) bool { return names(n, p) }) {
			return f, true
		}
	}
	return floor{}, false
}

// TestPackagesImportOnlyFromFloorsBelow holds the import rules of
// docs/architecture.md: every package's Herald imports (tests aside) are ones
// its floor allows, and every package is on a floor.
func TestPackagesImportOnlyFromFloorsBelow(t *testing.T) {
	t.Parallel()
	imports := heraldImports(t)
	if len(imports) < 30 {
		t.Fatalf("found %d packages; is the walk right?", len(imports))
	}
	for p, imps := range imports {
		f, ok := floorOf(p)
		if !ok {
			t.Errorf("%s is on no floor: add it to docs/architecture.md and to floors", p)
			continue
		}
		for _, imp := range imps {
			if !f.allows(imp) {
				t.Errorf("%s imports %s, which its floor does not allow (docs/architecture.md)", p, imp)
			}
		}
	}
}

func TestAnImportAcrossFloorsIsFound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pkg, imp string
		ok       bool
	}{
		{"worker", "store", true},
		{"worker", "engine", false},
		{"engine", "api", false},
		{"channels/webhook", "engine/jexl", true},
		{"channels/webhook", "notify", false},
		{"store", "notify", false},
		{"analytics/xtab", "analytics/query", true},
		{"console", "store", false},
		{"cmd/herald", "api", false},
		{"internal/httpserve", "internal/httpguard", true},
		{"internal/httpserve", "api", false},
		{"channels", "internal/clock", true},
		{"internal/clock", "channels", false},
		{"bench/api", "app", true},
		{"bench/internal/latency", "app", false},
		{"bench/internal/mailcheck", "channels/channeltest", true},
	} {
		f, ok := floorOf(c.pkg)
		got := ok && f.allows(c.imp)
		if got != c.ok {
			t.Errorf("%s importing %s allowed = %v, want %v", c.pkg, c.imp, got, c.ok)
		}
	}
}

// heraldImports maps each package of the module (by its path inside it, "."
// for the root) to the packages of the module its non-test files import.
func heraldImports(t *testing.T) map[string][]string {
	t.Helper()
	out := make(map[string][]string)
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, s := range f.Imports {
			imp := strings.Trim(s.Path.Value, `"`)
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(out[pkg], rest) {
				out[pkg] = append(out[pkg], path.Clean(rest))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
