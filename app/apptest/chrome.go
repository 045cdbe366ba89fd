package apptest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromeNames are the names Chromium's binary goes by.
var chromeNames = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// Chrome starts a headless Chromium for the test and returns the context
// chromedp runs its actions in; it ends with the test. Without Chromium the
// test is skipped with the Debian package to install, except in CI
// (CI=true), where .ci/run installs it and a missing browser fails the test.
func Chrome(t testing.TB) context.Context {
	t.Helper()
	var path string
	for _, name := range chromeNames {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is not on PATH: .ci/run installs Debian's chromium package")
		}
		t.Skip("needs Chromium: install Debian's chromium package (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.NoSandbox, // containers and CI run as root, where the sandbox cannot start
		chromedp.Flag("hide-scrollbars", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	return ctx
}
