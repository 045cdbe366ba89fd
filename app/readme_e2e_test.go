package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// TestTheREADMETourRuns runs the README's "your first subscription" as its
// shell blocks stand, against a demo service: the ids it finds, the channel
// and subscription it makes, the send now, and the mail in the outbox. The
// block a person runs "a moment later" runs once the mail is there.
func TestTheREADMETourRuns(t *testing.T) {
	gate.Parallel(t)
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not on PATH: .ci/run installs Debian's %s", tool, tool)
			}
			t.Skipf("%s not on PATH (apt-get install %s)", tool, tool)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, tour, ok := strings.Cut(string(readme), "### Your first subscription")
	if !ok {
		t.Fatal(`the README has no "Your first subscription"`)
	}
	tour, _, _ = strings.Cut(tour, "\n## ")
	now, later, ok := strings.Cut(tour, "A moment later:")
	if !ok {
		t.Fatal(`the tour has no "A moment later:"`)
	}
	first, then := shellOf(now), shellOf(later)
	if !strings.Contains(first, "/send") || !strings.Contains(then, "outbox") {
		t.Fatalf("the tour's shell blocks send nothing, or look for no mail:\n%s\n%s", first, then)
	}

	b := apptest.StartDemo(t)
	dir := t.TempDir()
	if err := os.Symlink(b.Config.Data, filepath.Join(dir, "herald-data")); err != nil {
		t.Fatal(err)
	}
	out := runShell(t, dir, b.URL, first+"\necho; echo \"SUB=$SUB\"\n")
	sub := regexp.MustCompile(`SUB=(/svc/projects/\w+/users/\w+/subscriptions/\w+)`).FindSubmatch(out)
	if sub == nil || !strings.Contains(string(out), `"state":"running"`) {
		t.Fatalf("the tour made no subscription, or its send now started no run:\n%s", out)
	}
	waitFor(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(b.Config.Data, "outbox", "*.eml"))
		for _, f := range files {
			if data, _ := os.ReadFile(f); strings.Contains(string(data), "Revenue this morning") {
				return true
			}
		}
		return false
	})
	// The second block runs with the first's address, helper and subscription.
	var prelude strings.Builder
	for line := range strings.Lines(first) {
		if strings.HasPrefix(line, "B=") || strings.HasPrefix(line, "api()") {
			prelude.WriteString(line)
		}
	}
	// The mail is out a moment before the ledger records it and the run is
	// delivered: a reader who finds the run still queued runs the block again.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the tour's second block, run last, printed:\n%s", out)
		}
	})
	waitForWithin(t, 10*time.Second, func() bool {
		out = runShell(t, dir, b.URL, prelude.String()+"SUB="+string(sub[1])+"\n"+then)
		return strings.Contains(string(out), `"state":"delivered"`) && strings.Contains(string(out), ".eml")
	})
}

// shellOf is the text of the sh blocks of Markdown md.
func shellOf(md string) string {
	var b strings.Builder
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(md, -1) {
		b.WriteString(m[1])
	}
	return b.String()
}

// runShell runs script with bash in dir, strictly, against the service at url
// in place of the README's address, as the admin.
func runShell(t *testing.T, dir, url, script string) []byte {
	t.Helper()
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", strings.ReplaceAll(script, "http://127.0.0.1:8080", url))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HERALD_ADMIN_PASSWORD="+apptest.AdminPassword)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tour failed: %v\n%s", err, out)
	}
	return out
}
