package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineImportsNoHTTPSide: the engine reaches the analytics service
// through the port it declares, in process, never through the service's
// HTTP side: no package it builds on, directly or not, is the API, its
// client or the console.
func TestEngineImportsNoHTTPSide(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/heraldhq/herald/"
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), module+"notify") {
		t.Fatalf("go list named %d packages, not the engine's: %s", len(deps), out)
	}
	for _, dep := range deps {
		for _, http := range []string{"api", "client", "console"} {
			if dep == module+http || strings.HasPrefix(dep, module+http+"/") {
				t.Errorf("the engine builds on %s", dep)
			}
		}
	}
}
