package app_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/internal/natstest"
	"github.com/heraldhq/herald/store"
)

// TestFrozenHolderWritesNothingOnceThawed is the split brain an
// orchestrator can make: control process A (with its replicator) is frozen
// with SIGSTOP, as a paused machine or a long stall, while it holds the
// lease and its subscriptions fire every ten seconds. B, standing by, takes
// the lease once it lapses, restores and fires the next instant. When A
// thaws, an instant is due on its schedule, yet it commits nothing: its
// store's fence counts the lease lapsed by the clock, before any renewal
// tells it that B holds it, and it stops. Every instant is mailed once, and
// B's replica, which A's replicator could have written to on thawing, still
// restores for a third process C.
func TestFrozenHolderWritesNothingOnceThawed(t *testing.T) {
	gate.Quiet(t) // waits on ten-second instants and the lease
	if testing.Short() {
		t.Skip("a nats-server and four herald processes")
	}
	const subs = 10
	cluster := natstest.Start(t, 1)
	smtp := channeltest.NewSMTPServer(t)
	shared := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_DELIVERY_LEDGER=jetstream",
		"HERALD_DELIVERY_KEYFILE=" + writeKey(t), "HERALD_SMTP_HOST=" + smtp.Host(), fmt.Sprintf("HERALD_SMTP_PORT=%d", smtp.Port()),
		"HERALD_SMTP_TLSPOLICY=none", "HERALD_SMTP_FROM=alerts@herald.test", "HERALD_LOG_ACCESS=off"}
	control := append(slices.Clone(shared), "HERALD_ROLES=api,engine", "HERALD_REPLICA_URL="+cluster.Nodes[0].ClientURL+"/HERALD_REPLICA",
		"HERALD_SUBSCRIPTIONS_MININTERVAL=10s")
	w := apptest.StartProcess(t, t.TempDir(), append(slices.Clone(shared), "HERALD_ROLES=worker")...)
	a := apptest.StartProcess(t, t.TempDir(), control...)
	admin := newBrowserAs(t, a.URL)
	_, profile := everyTenSeconds(t, admin, subs, "f")
	b := apptest.StartProcess(t, t.TempDir(), control...)
	var c *apptest.Process
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("A printed:\n%s\nB printed:\n%s\nworker printed:\n%s", tail(a.Out.String(), 4000), tail(b.Out.String(), 4000),
				tail(w.Out.String(), 2000))
			if c != nil {
				t.Logf("C printed:\n%s", tail(c.Out.String(), 2000))
			}
		}
	})
	mails := func() int { return len(smtp.Messages()) }

	// Freeze A between two instants, once an instant is mailed, recorded
	// and in the replica: what B restores is all A did.
	waitFor(t, func() bool { return mails() >= subs })
	var settled time.Time
	waitFor(t, func() bool {
		n := mails()
		if !settledAt(t, a.Dir, n) {
			return false
		}
		settled = time.Now()
		return true
	})
	waitReplicated(t, a.OpsURL, settled)
	a.SignalAll(syscall.SIGSTOP)
	frozen := mails()
	t.Cleanup(func() { a.SignalAll(syscall.SIGCONT) })

	url := b.API(time.Minute)
	waitFor(t, func() bool { return mails() >= frozen+subs }) // B fired an instant
	before := fingerprint(t, a.Dir)
	a.SignalAll(syscall.SIGCONT)
	thawed := time.Now()
	if exited, _ := a.Wait(30 * time.Second); !exited {
		t.Fatal("A still runs 30 s after it thawed, with B holding the lease")
	}
	if !strings.Contains(a.Out.String(), "lost the control lease") {
		t.Errorf("A did not say it lost the lease:\n%s", tail(a.Out.String(), 2000))
	}
	if after := fingerprint(t, a.Dir); after != before {
		t.Errorf("A wrote to its database after it thawed: %s, then %s", before, after)
	}
	stopped := time.Since(thawed)

	// B goes on alone; every instant is mailed once.
	atThaw := mails()
	waitFor(t, func() bool { return mails() >= atThaw+subs })
	bb := newBrowserAs(t, url)
	r := bb.do("POST", profile+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"made-on-b@example.com"}},"meta":{"title":"Made on B"}}}`)
	wantStatus(t, r, 201)
	madeOnB := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	var lastMail time.Time
	waitFor(t, func() bool {
		n := mails()
		if !settledAt(t, b.Dir, n) {
			return false
		}
		lastMail = time.Now()
		return true
	})
	distinct := noMailTwice(t, smtp)

	// B's replica, which A's replicator shared the bucket of once it
	// thawed, restores what B made.
	waitReplicated(t, b.OpsURL, lastMail)
	b.KillAll()
	c = apptest.StartProcess(t, t.TempDir(), control...)
	cURL := c.API(time.Minute)
	if !strings.Contains(c.Out.String(), "Restored from nats://") {
		t.Errorf("C did not restore:\n%s", tail(c.Out.String(), 2000))
	}
	if got := newBrowserAs(t, cURL).do("GET", madeOnB, ""); got.status != 200 {
		t.Errorf("the channel made on B after A thawed is not on C: %d %s", got.status, got.body)
	}
	t.Logf("A frozen after %d mails; B fired meanwhile; A stopped %v after it thawed, its database untouched; %d mails, none twice; C restored B's replica",
		frozen, stopped.Round(time.Millisecond), distinct)
}

// settledAt reports whether the database of the data folder dir holds no
// run in flight and n delivered ones: every instant fired is mailed, n mails,
// and recorded. An instant is not always subs mails: one that falls while
// the subscriptions are being made fires those made before it.
func settledAt(t *testing.T, dir string, n int) bool {
	t.Helper()
	st := runStates(t, dir)
	return st[store.RunRunning] == 0 && st[store.RunQueued] == 0 && st[store.RunDelivered] == n
}

// fingerprint sums up the runs and deliveries in the database of the data
// folder dir: their ids and states, in order.
func fingerprint(t *testing.T, dir string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "herald.db")+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := sha256.New()
	var n int
	for _, q := range []string{`SELECT id, state FROM runs ORDER BY id`, `SELECT id, state FROM deliveries ORDER BY id`} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, state string
			if err := rows.Scan(&id, &state); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%s %s\n", id, state)
			n++
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("%d rows, %s", n, hex.EncodeToString(h.Sum(nil))[:12])
}

// TestRestoreOnStartBringsTheWarehousesAndKeys: the demo's control process
// A replicates its database, the demo project's warehouse and its secret
// key; its machine is lost. B, started on an empty folder, restores all
// three before it opens anything, says so, and its reports answer what A's
// did, from the same key.
func TestRestoreOnStartBringsTheWarehousesAndKeys(t *testing.T) {
	gate.Long(t)
	if testing.Short() {
		t.Skip("a nats-server and two herald processes")
	}
	cluster := natstest.Start(t, 1)
	env := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_DELIVERY_LEDGER=jetstream",
		"HERALD_DELIVERY_KEYFILE=" + writeKey(t), "HERALD_REPLICA_URL=" + cluster.Nodes[0].ClientURL + "/HERALD_REPLICA",
		"HERALD_LOG_ACCESS=off"}
	a := apptest.StartDemoProcess(t, t.TempDir(), env...)
	pid := demoPID(t, a)
	want := demoAnswers(t, a.URL, pid)
	key, err := os.ReadFile(filepath.Join(a.Dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(a.Out.String(), "put a snapshot of a project's warehouse") })
	done := time.Now()
	waitReplicated(t, a.OpsURL, done)
	a.KillAll()
	if err := os.RemoveAll(a.Dir); err != nil {
		t.Fatal(err)
	}

	b := apptest.StartProcess(t, t.TempDir(), env...)
	url := b.API(time.Minute)
	said := regexp.MustCompile(`Restored from nats://\S+: herald.db as of .*, the warehouses of 1 projects, keys: .*secret.key`)
	if !said.MatchString(b.Out.String()) {
		t.Errorf("B did not say it restored the database, the warehouse and the key:\n%s", tail(b.Out.String(), 3000))
	}
	if got, err := os.ReadFile(filepath.Join(b.Dir, "secret.key")); err != nil || !bytes.Equal(got, key) {
		t.Errorf("B's secret.key is not A's: %v", err)
	}
	got := demoAnswers(t, url, pid)
	for title, x := range want {
		if got[title] == nil || !reflect.DeepEqual(got[title].Data, x.Data) {
			t.Errorf("%s answers otherwise on B", title)
		}
	}
}
