package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/client"
)

// TestUpgradeRemovesTheEngineAccount starts on a data folder made by the
// version whose engine called the API as a hidden domain admin
// (testdata/upgrade): the account's credentials file is gone, so are the
// account, its session and its tokens, logging in with its credentials
// fails, and the log says so once.
func TestUpgradeRemovesTheEngineAccount(t *testing.T) {
	gate.Parallel(t)
	dir := t.TempDir()
	dump, err := os.ReadFile("testdata/upgrade/herald.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	var account string
	if err := db.QueryRow(`SELECT id FROM users WHERE is_service = 1`).Scan(&account); err != nil {
		t.Fatalf("the fixture's service account: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	cred, err := os.ReadFile("testdata/upgrade/engine.credentials")
	if err != nil {
		t.Fatal(err)
	}
	credentials := filepath.Join(dir, "engine.credentials")
	if err := os.WriteFile(credentials, cred, 0o600); err != nil {
		t.Fatal(err)
	}

	b := apptest.Start(t, func(c *app.Config) { c.Data = dir })
	if _, err := os.Stat(credentials); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("engine.credentials after the start: %v", err)
	}
	db, err = sql.Open("sqlite3", "file:"+filepath.Join(dir, "herald.db")+"?_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for what, q := range map[string]string{
		"service accounts":   `SELECT COUNT(*) FROM users WHERE is_service = 1 OR id = ?`,
		"its sessions":       `SELECT COUNT(*) FROM sessions WHERE user_id = ?`,
		"its session tokens": `SELECT COUNT(*) FROM temp_tokens WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?) OR session_id NOT IN (SELECT id FROM sessions)`,
	} {
		var n int
		if err := db.QueryRow(q, account).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s after the start: %d (%v)", what, n, err)
		}
	}

	var c struct{ Login, Password string }
	if err := json.Unmarshal(cred, &c); err != nil || !strings.HasSuffix(c.Login, "@service.invalid") {
		t.Fatalf("the fixture's credentials: %q, %v", c.Login, err)
	}
	_, err = b.Client("old-engine").Login(context.Background(), c.Login, c.Password)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusUnauthorized {
		t.Errorf("login with the old engine's credentials: %v, want 401", err)
	}
	if n := strings.Count(b.Log.String(), "removed the engine's service account"); n != 1 {
		t.Errorf("the log says %d times that the service account was removed, want once:\n%s", n, b.Log)
	}
	// The domain admin of the old folder still logs in (apptest.Start did).
	if b.AdminProfile == "" {
		t.Error("the domain admin of the old folder did not log in")
	}
}
