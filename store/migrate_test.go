package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// databaseOfVersion creates the database at path as the first version
// migrations left it, with a domain, a user u1 and a project p1, and returns
// it open, with a function that runs a statement on it or fails the test.
func databaseOfVersion(t *testing.T, path string, version int) (*sql.DB, func(q string, args ...any)) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	sort.Strings(names)
	mustExec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`)
	for i, name := range names[:version] {
		body, _ := migrations.ReadFile(name)
		mustExec(string(body))
		mustExec(`INSERT INTO schema_migrations VALUES (?, ?, 0)`, i+1, filepath.Base(name))
	}
	mustExec(`INSERT INTO domains VALUES ('default', 0)`)
	mustExec(`INSERT INTO users(id, domain, login, password_hash, created, updated) VALUES ('u1', 'default', 'u1@x.io', 'x', 0, 0)`)
	mustExec(`INSERT INTO projects(id, title, state, author, contributor, created, updated) VALUES ('p1', 'P', 'ENABLED', 'u1', 'u1', 0, 0)`)
	return db, mustExec
}

// TestMigrationKeepsChannelsInUse builds a database as version 10 left it,
// with an e-mail channel that a subscription uses and a run, and opens it: the
// channels table is made again without its list of kinds, and the channel,
// the subscription's use of it and the run are all still there; the old run
// counts as rated, and a channel of a kind version 10 did not know is stored.
func TestMigrationKeepsChannelsInUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	old, mustExec := databaseOfVersion(t, path, 10)
	mustExec(`INSERT INTO channels VALUES ('c1', 'u1', 'email', 'Mail', '{"to":"u1@x.io"}', NULL, 0, 0)`)
	mustExec(`INSERT INTO subscriptions(id, project_id, owner, title, doc, created, updated) VALUES ('s1', 'p1', 'u1', 'S', '{}', 0, 0)`)
	mustExec(`INSERT INTO subscription_channels VALUES ('s1', 'c1', 0)`)
	mustExec(`INSERT INTO runs(id, subscription_id, scheduled_at, state, started, finished) VALUES ('r1', 's1', 60, 'failed', 60, 60)`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open the version 10 database: %v", err)
	}
	defer s.Close()
	ch, err := s.ChannelByID(ctx, "c1")
	if err != nil || ch.Kind != "email" || string(ch.Config) != `{"to":"u1@x.io"}` {
		t.Fatalf("channel after the migration = %+v, %v", ch, err)
	}
	sub, err := s.SubscriptionByID(ctx, "s1")
	if err != nil || len(sub.Channels) != 1 || sub.Channels[0] != "c1" {
		t.Fatalf("subscription after the migration = %+v, %v", sub, err)
	}
	if runs, err := s.UnratedRuns(ctx, 10); err != nil || len(runs) != 0 {
		t.Fatalf("unrated runs = %v, %v; the old run should count as rated", runs, err)
	}
	if err := s.CreateChannel(ctx, Channel{ID: "c2", Owner: "u1", Kind: "slack", Title: "Slack", Config: []byte(`{"channel":"C1"}`)}, Quota{}); err != nil {
		t.Fatalf("a new kind: %v", err)
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM channels WHERE id = 'c1'`); err == nil {
		t.Fatal("deleted a channel a subscription uses: the foreign key is gone")
	}
}

// TestMigrationMovesDeliveryPayloads builds a database as version 12 left it,
// with a delivery whose payload is in its row, and opens it: the delivery
// reads back with its payload, and pruning its run, once the delivery is final,
// removes the payload too.
func TestMigrationMovesDeliveryPayloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	old, mustExec := databaseOfVersion(t, path, 12)
	mustExec(`INSERT INTO subscriptions(id, project_id, owner, title, doc, created, updated) VALUES ('s1', 'p1', 'u1', 'S', '{}', 0, 0)`)
	mustExec(`INSERT INTO runs(id, subscription_id, scheduled_at, state, started) VALUES ('r1', 's1', 60, 'queued', 60)`)
	mustExec(`INSERT INTO deliveries(id, run_id, subscription_id, scheduled_at, channel_id, kind, payload, created, updated)
		VALUES ('d1', 'r1', 's1', 60, 'c1', 'email', '{"subject":"Revenue","text":"up 3%"}', 60, 60)`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open the version 12 database: %v", err)
	}
	defer s.Close()
	d, err := s.Delivery(ctx, "d1")
	if err != nil || d.Payload.Subject != "Revenue" || d.Payload.Text != "up 3%" || d.State != DeliveryPending {
		t.Fatalf("delivery after the migration = %+v, %v", d, err)
	}
	if _, err := s.MarkFailed(ctx, "d1", "given up", time.Unix(61, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PruneRuns(ctx, time.Unix(61, 0)); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM delivery_payloads`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("payloads left after the run was pruned: %d, %v", left, err)
	}
}

// TestMigrationStartsChannelsInGenerationZero builds a database as version 14 left
// it, with a subscription whose one channel is paused, and opens it: the channel is
// in generation 0, which links made before name, and turning it back on moves it on.
func TestMigrationStartsChannelsInGenerationZero(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	old, mustExec := databaseOfVersion(t, path, 14)
	mustExec(`INSERT INTO channels VALUES ('c1', 'u1', 'email', 'Mail', '{"to":"u1@x.io"}', NULL, 0, 0)`)
	mustExec(`INSERT INTO subscriptions(id, project_id, owner, title, doc, created, updated) VALUES ('s1', 'p1', 'u1', 'S', '{}', 0, 0)`)
	mustExec(`INSERT INTO subscription_channels(subscription_id, channel_id, position, paused_at, paused_by) VALUES ('s1', 'c1', 0, 60, 'u1@x.io')`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open the version 14 database: %v", err)
	}
	defer s.Close()
	sub, err := s.SubscriptionByID(ctx, "s1")
	if err != nil || len(sub.Generations) != 0 || len(sub.Paused) != 1 {
		t.Fatalf("subscription after the migration = %+v, %v", sub, err)
	}
	sub.Paused = nil
	if err := s.UpdateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if sub, _ = s.SubscriptionByID(ctx, "s1"); sub.Generations["c1"] != 1 {
		t.Fatalf("generations after the resume: %v", sub.Generations)
	}
}

// TestMigrationRemovesTheServiceAccount builds a database as version 17 left
// it, with the engine's service account, its session and token and a channel
// a holder of its credentials made, beside a user's session, and opens it:
// the account and all it had are gone, the user's session stays.
func TestMigrationRemovesTheServiceAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	old, mustExec := databaseOfVersion(t, path, 17)
	mustExec(`INSERT INTO users(id, domain, login, password_hash, is_domain_admin, is_service, created, updated)
		VALUES ('svc', 'default', 'herald-engine@service.invalid', 'x', 1, 1, 0, 0)`)
	for _, u := range []string{"svc", "u1"} {
		mustExec(`INSERT INTO sessions(id, user_id, token_hash, user_agent, created, expires) VALUES (?, ?, ?, 'ua', 0, 9999999999)`,
			"se-"+u, u, []byte("sst-"+u))
		mustExec(`INSERT INTO temp_tokens(token_hash, session_id, expires) VALUES (?, ?, 9999999999)`, []byte("tt-"+u), "se-"+u)
	}
	mustExec(`INSERT INTO channels(id, owner, kind, title, config, created, updated) VALUES ('c1', 'svc', 'email', 'Mail', '{}', 0, 0)`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UserByLogin(ctx, "herald-engine@service.invalid"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the service account after the migration: %v", err)
	}
	for table, want := range map[string]int{"sessions": 1, "temp_tokens": 1, "channels": 0} {
		var n int
		if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil || n != want {
			t.Errorf("%s after the migration: %d (%v), want %d", table, n, err, want)
		}
	}
	if _, err := s.UserByLogin(ctx, "u1@x.io"); err != nil {
		t.Errorf("the user after the migration: %v", err)
	}
}

// TestMigrationKeepsDeliveryMarks builds a database as version 19 left it,
// with a sent delivery that carries its payload and its marks, and opens it:
// the deliveries' table is made again for recipients' addresses, and the
// delivery keeps its payload and marks, which still go with its run when the
// run is pruned.
func TestMigrationKeepsDeliveryMarks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "herald.db")
	old, mustExec := databaseOfVersion(t, path, 19)
	mustExec(`INSERT INTO subscriptions(id, project_id, owner, title, doc, created, updated) VALUES ('s1', 'p1', 'u1', 'S', '{}', 0, 0)`)
	mustExec(`INSERT INTO runs(id, subscription_id, scheduled_at, state, started) VALUES ('r1', 's1', 60, 'delivered', 60)`)
	mustExec(`INSERT INTO deliveries(id, run_id, subscription_id, scheduled_at, channel_id, kind, state, created, updated)
		VALUES ('d1', 'r1', 's1', 60, 'c1', 'email', 'sent', 60, 60)`)
	mustExec(`INSERT INTO delivery_payloads(delivery_id, payload) VALUES ('d1', '{"subject":"Revenue"}')`)
	mustExec(`INSERT INTO delivery_marks(delivery_id, digest, high_water) VALUES ('d1', 'abc', '{}')`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open the version 19 database: %v", err)
	}
	defer s.Close()
	d, err := s.Delivery(ctx, "d1")
	if err != nil || d.Payload.Subject != "Revenue" || d.State != DeliverySent || d.Address != "" || d.Recipient != "" {
		t.Fatalf("delivery after the migration = %+v, %v", d, err)
	}
	var marks int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM delivery_marks WHERE delivery_id = 'd1'`).Scan(&marks); err != nil || marks != 1 {
		t.Fatalf("marks after the migration: %d, %v", marks, err)
	}
	if _, err := s.PruneRuns(ctx, time.Unix(61, 0)); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM delivery_marks) + (SELECT count(*) FROM delivery_payloads)`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("marks and payloads left after the run was pruned: %d, %v", left, err)
	}
}
