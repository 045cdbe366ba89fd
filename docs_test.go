package herald

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestEveryConfigurationKeyIsDocumented: each key configs/herald.yaml shows
// is in docs/configuration.md.
func TestEveryConfigurationKeyIsDocumented(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("configs/herald.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	doc := read(t, "docs/configuration.md")
	keys := keyPaths(root.Content[0], "")
	if len(keys) < 100 {
		t.Fatalf("configs/herald.yaml shows %d keys; is the walk right?", len(keys))
	}
	for _, k := range keys {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docs/configuration.md does not name `%s`", k)
		}
	}
}

// keyPaths lists the dotted paths of every key under a mapping node.
func keyPaths(n *yaml.Node, prefix string) []string {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := prefix + n.Content[i].Value
		out = append(out, k)
		out = append(out, keyPaths(n.Content[i+1], k+".")...)
	}
	return out
}

// TestTheREADMEStartsPeople: the README opens with the two commands and stays
// short enough to read; the rest is in docs/.
func TestTheREADMEStartsPeople(t *testing.T) {
	t.Parallel()
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("the README is %d lines, more than 300: move the reference into docs/", n)
	}
	serve := strings.Index(readme, "go run ./cmd/herald serve --demo")
	test := strings.Index(readme, "go test ./...")
	if serve < 0 || test < 0 || serve > 1000 || test > 1000 {
		t.Errorf("the README's first screen lacks the two commands (at %d and %d)", serve, test)
	}
}

// TestLinksLead: every relative link of the README and docs/ names a file
// that is there, and every #anchor a heading of that file.
func TestLinksLead(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "bench/README.md")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		for _, m := range link.FindAllStringSubmatch(read(t, f), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := f
			if file != "" {
				path = filepath.Join(filepath.Dir(f), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which is not there", f, target)
				continue
			}
			if anchor != "" && !anchors(t, path)[anchor] {
				t.Errorf("%s links to %s, whose file has no heading %q", f, target, anchor)
			}
		}
	}
}

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) map[string]bool {
	out := make(map[string]bool)
	if !strings.HasSuffix(path, ".md") {
		return out
	}
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	sc := bufio.NewScanner(strings.NewReader(read(t, path)))
	fence := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		out[strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTheDashboardShowsEverySeries: deploy/grafana/herald.json draws every
// metric family docs/operations.md lists.
func TestTheDashboardShowsEverySeries(t *testing.T) {
	t.Parallel()
	dashboard := read(t, "deploy/grafana/herald.json")
	names := regexp.MustCompile("`(herald_[a-z_]+)`").FindAllStringSubmatch(read(t, "docs/operations.md"), -1)
	if len(names) < 20 {
		t.Fatalf("docs/operations.md names %d metric families; is the pattern right?", len(names))
	}
	for _, n := range names {
		if !strings.Contains(dashboard, n[1]) {
			t.Errorf("the dashboard does not show %s", n[1])
		}
	}
}
