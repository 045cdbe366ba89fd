package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/internal/natstest"
)

// recovery is the scale-out topology with a replicated control process: three
// clustered nats-servers, control process A replicating into the cluster,
// two worker processes paced to 40 mails a second each, and the drill's
// 1,000 subscriptions due at one instant, one mail each.
type recovery struct {
	*drill
	cluster *natstest.Cluster
	control []string // the control process's environment
	workers []*apptest.Process
}

func newRecovery(t *testing.T) *recovery {
	t.Helper()
	if testing.Short() {
		t.Skip("three nats-servers and four herald processes")
	}
	cluster := natstest.Start(t, 3)
	shared := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_NATS_REPLICAS=3", "HERALD_DELIVERY_LEDGER=jetstream",
		"HERALD_DELIVERY_KEYFILE=" + writeKey(t), "HERALD_DELIVERY_ACKWAIT=2s", "HERALD_LOG_LEVEL=info"}
	control := append(slices.Clone(shared), "HERALD_ROLES=api,engine",
		"HERALD_REPLICA_URL="+cluster.Nodes[0].ClientURL+"/HERALD_REPLICA")
	r := &recovery{cluster: cluster, control: control}
	r.drill = newDrillOf(t, 1, func(d *drill) {
		r.control = d.env
		workerEnv := append(slices.Clone(d.env[:len(d.env)-len(control)]), shared...)
		workerEnv = append(workerEnv, "HERALD_ROLES=worker", "HERALD_SMTP_RATE=40")
		for range 2 {
			r.workers = append(r.workers, apptest.StartProcess(t, t.TempDir(), workerEnv...))
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("control printed:\n%s", tail(d.p.Out.String(), 6000))
				for i, w := range r.workers {
					t.Logf("worker %d printed:\n%s", i+1, tail(w.Out.String(), 3000))
				}
			}
		})
		for _, w := range r.workers {
			waitFor(t, func() bool { code, _ := readyz(t, w.OpsURL); return code == 200 })
		}
	}, control...)
	return r
}

// writeKey writes a delivery key file for every process of a test.
func writeKey(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "delivery.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(randomKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// markers creates a channel on the control process at url every 100 ms until
// stop is closed, and returns, once it stopped, each one's URI and when the
// API answered it created.
func markers(t *testing.T, url string, stop <-chan struct{}) func() []marker {
	t.Helper()
	b := newBrowser(t, url, "markers")
	b.loginWithToken("admin@herald.local", apptest.AdminPassword)
	profile := b.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	jar := b.hc.Jar
	var out []marker
	done := make(chan struct{})
	go func() {
		defer close(done)
		hc := &http.Client{Jar: jar, Timeout: 2 * time.Second}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			body := fmt.Sprintf(`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"marker%d@example.com"}},"meta":{"title":"Marker %d"}}}`, i, i)
			req, _ := http.NewRequest("POST", url+profile+"/channelConfigurations", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				continue // the process is going
			}
			var created struct {
				C struct {
					Meta struct {
						URI string `json:"uri"`
					} `json:"meta"`
				} `json:"channelConfiguration"`
			}
			if resp.StatusCode == 201 && json.NewDecoder(resp.Body).Decode(&created) == nil && created.C.Meta.URI != "" {
				out = append(out, marker{uri: created.C.Meta.URI, at: time.Now()})
			}
			resp.Body.Close()
		}
	}()
	return func() []marker { <-done; return out }
}

// marker is a channel the markers created.
type marker struct {
	uri string
	at  time.Time
}

// newestKept returns the newest of ms that the process at url has.
func newestKept(t *testing.T, url string, ms []marker) (marker, bool) {
	t.Helper()
	b := newBrowser(t, url, "check")
	b.loginWithToken("admin@herald.local", apptest.AdminPassword)
	for i := len(ms) - 1; i >= 0; i-- {
		if r := b.do("GET", ms[i].uri, ""); r.status == 200 {
			return ms[i], true
		}
	}
	return marker{}, false
}

// TestControlMachineLost is the drill of the lost control machine: control
// process A replicates into the cluster while 1,000 subscriptions fire at one
// instant and two workers send; halfway through the burst A and its
// replicator are killed with SIGKILL and its data folder deleted, as with a
// machine gone. B starts on an
// empty folder: it restores the replica, takes the lease, adopts A's runs;
// every mail arrives, at most 8 twice, every run is final within 60 s of B's
// start, and a subscription made 2 s before the kill is on B.
func TestControlMachineLost(t *testing.T) {
	gate.Long(t)
	r := newRecovery(t)
	a := r.p
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("A printed:\n%s", tail(a.Out.String(), 6000))
		}
	})
	stop := make(chan struct{})
	made := markers(t, a.URL, stop)
	r.waitAccepted(drillSubscriptions / 2)
	late := newBrowser(t, a.URL, "late")
	late.loginWithToken("admin@herald.local", apptest.AdminPassword)
	lateSub := createSubscription(t, late, "Made 2 s before the kill")
	time.Sleep(2 * time.Second) // the subscription's age at the kill
	before, _ := r.counts()
	a.KillAll() // with its replicator: the machine is gone
	killed := time.Now()
	close(stop)
	if err := os.RemoveAll(a.Dir); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	b := apptest.StartProcess(t, t.TempDir(), r.control...)
	r.p, r.dir = b, b.Dir
	url := b.API(60 * time.Second)
	waitFor(t, func() bool { code, _ := readyz(t, b.OpsURL); return code == 200 })
	ready := time.Now()
	if !strings.Contains(b.Out.String(), "Restored from nats://") {
		t.Errorf("B did not say what it restored:\n%s", tail(b.Out.String(), 2000))
	}
	all := r.waitMails(r.mails(), 60*time.Second-time.Since(began))
	r.waitFinal(60*time.Second - time.Since(began))
	final := time.Now()
	distinct, dups := r.counts()
	if dups > 24 {
		t.Errorf("%d duplicates, more than a process's accepted, unrecorded sends may be (three per slot, 24)", dups)
	}
	if got := newBrowserAs(t, url).do("GET", lateSub, ""); got.status != 200 {
		t.Errorf("the subscription made 2 s before the kill is not on B: %d %s", got.status, got.body)
	}
	kept, ok := newestKept(t, url, made())
	if !ok {
		t.Fatal("no marker made on A is on B")
	}
	checkReplicas(t, r.cluster, 3)
	t.Logf("A killed after %d of %d mails; B restored and ready %s after its start (%s after the kill); all %d mails %s and every run final %s after B's start; %d duplicates; the newest change kept was made %s before the kill",
		before, r.mails(), ready.Sub(began).Round(time.Millisecond), ready.Sub(killed).Round(time.Millisecond), distinct,
		all.Sub(began).Round(time.Millisecond), final.Sub(began).Round(time.Millisecond), dups, killed.Sub(kept.at).Round(time.Millisecond))
}

// checkReplicas checks that the replica's object store and the control
// lease's bucket are kept on n nodes of the cluster: a node's loss loses
// neither.
func checkReplicas(t *testing.T, cluster *natstest.Cluster, n int) {
	t.Helper()
	ctx := context.Background()
	js := cluster.JetStream()
	defer js.Conn().Close()
	for _, stream := range []string{"OBJ_HERALD_REPLICA", "KV_HERALD_CONTROL"} {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Errorf("%s: %v", stream, err)
			continue
		}
		if got := s.CachedInfo().Config.Replicas; got != n {
			t.Errorf("%s is kept on %d nodes, want %d", stream, got, n)
		}
	}
}

// createSubscription creates a project, a channel and a yearly subscription
// as b's user, and returns the subscription's URI.
func createSubscription(t *testing.T, b *browser, title string) string {
	t.Helper()
	r := b.do("POST", "/svc/projects/", `{"project":{"meta":{"title":"Late"}}}`)
	wantStatus(t, r, 201)
	pid := strings.TrimPrefix(r.json(t)["uri"].(string), "/svc/projects/")
	profile := b.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	r = b.do("POST", profile+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"late@example.com"}},"meta":{"title":"Late"}}}`)
	wantStatus(t, r, 201)
	ch := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	r = b.do("POST", "/svc/projects/"+pid+"/users/"+uid(profile)+"/subscriptions", fmt.Sprintf(
		`{"subscription":{"triggers":[{"timerEvent":{"cronExpression":"0 0 9 1 1 *"}}],"condition":{"condition":{"expression":"true"}},`+
			`"subject":{"template":{"expression":"Late"}},"message":{"template":{"expression":"Late"}},"channels":[%q],"meta":{"title":%q}}}`, ch, title))
	wantStatus(t, r, 201)
	return r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
}

// newBrowserAs is a browser of url logged in as the domain admin.
func newBrowserAs(t *testing.T, url string) *browser {
	t.Helper()
	b := newBrowser(t, url, "admin")
	b.loginWithToken("admin@herald.local", apptest.AdminPassword)
	return b
}

// everyTenSeconds creates, as admin, a project of n subscriptions that fire
// every ten seconds, each mailing its own address <prefix><i>@example.com,
// and returns the project's id and admin's profile.
func everyTenSeconds(t *testing.T, admin *browser, n int, prefix string) (pid, profile string) {
	t.Helper()
	pid = strings.TrimPrefix(admin.do("POST", "/svc/projects/", `{"project":{"meta":{"title":"Every ten seconds"}}}`).json(t)["uri"].(string),
		"/svc/projects/")
	profile = admin.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	title := strings.ToUpper(prefix)
	for i := range n {
		r := admin.do("POST", profile+"/channelConfigurations", fmt.Sprintf(
			`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"%s%d@example.com"}},"meta":{"title":"%s%d"}}}`, prefix, i, title, i))
		wantStatus(t, r, 201)
		ch := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
		wantStatus(t, admin.do("POST", "/svc/projects/"+pid+"/users/"+uid(profile)+"/subscriptions", fmt.Sprintf(
			`{"subscription":{"triggers":[{"timerEvent":{"cronExpression":"*/10 * * * * *"}}],"condition":{"condition":{"expression":"true"}},`+
				`"subject":{"template":{"expression":"%s%d"}},"message":{"template":{"expression":"M"}},"channels":[%q],"meta":{"title":"%s%d"}}}`,
			title, i, ch, title, i)), 201)
	}
	return pid, profile
}

// TestStandbyFiresNothingWhileTheLeaseIsHeld: B starts while A holds the
// control lease. While A fires twenty subscriptions every ten seconds, B
// opens nothing (no database in its folder, no API) and its /readyz answers
// 503 naming A. When A stops, B takes the lease, restores what A replicated
// and fires the next instants; every instant is mailed once.
func TestStandbyFiresNothingWhileTheLeaseIsHeld(t *testing.T) {
	gate.Quiet(t) // waits on ten-second instants and the lease
	if testing.Short() {
		t.Skip("a nats-server and two herald processes")
	}
	const subs = 20
	cluster := natstest.Start(t, 1)
	smtp := channeltest.NewSMTPServer(t)
	env := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_DELIVERY_LEDGER=jetstream",
		"HERALD_DELIVERY_KEYFILE=" + writeKey(t), "HERALD_REPLICA_URL=" + cluster.Nodes[0].ClientURL + "/HERALD_REPLICA",
		"HERALD_SMTP_HOST=" + smtp.Host(), fmt.Sprintf("HERALD_SMTP_PORT=%d", smtp.Port()), "HERALD_SMTP_TLSPOLICY=none",
		"HERALD_SMTP_FROM=alerts@herald.test", "HERALD_SUBSCRIPTIONS_MININTERVAL=10s", "HERALD_LOG_ACCESS=off"}
	a := apptest.StartProcess(t, t.TempDir(), env...)
	admin := newBrowserAs(t, a.URL)
	pid, profile := everyTenSeconds(t, admin, subs, "s")

	waitFor(t, func() bool { return scrape(t, a.OpsURL)["herald_replica_sync_age_seconds"] > 0 })
	if m := scrape(t, a.OpsURL); m["herald_control_lease_held"] != 1 || m["herald_replica_sync_age_seconds"] > 30 {
		t.Errorf("A's lease held %v, replica %vs behind", m["herald_control_lease_held"], m["herald_replica_sync_age_seconds"])
	}
	bDir := t.TempDir()
	b := apptest.StartProcess(t, bDir, env...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("A printed:\n%s\nB printed:\n%s", tail(a.Out.String(), 3000), tail(b.Out.String(), 3000))
		}
	})
	mails := func() int { return len(smtp.Messages()) }
	start := mails()
	deadline := time.Now().Add(time.Minute)
	for mails() < start+2*subs { // two instants fire while B waits
		if time.Now().After(deadline) {
			t.Fatalf("A mailed %d in a minute", mails()-start)
		}
		code, body := readyz(t, b.OpsURL)
		lease, _ := body["checks"].(map[string]any)["lease"].(string)
		if code != 503 || !strings.Contains(lease, fmt.Sprintf("pid %d", a.Pid())) {
			t.Fatalf("B's readyz while A holds the lease: %d %v", code, body)
		}
		if _, err := os.Stat(filepath.Join(bDir, "herald.db")); err == nil {
			t.Fatal("B opened a database while A held the lease")
		}
		time.Sleep(200 * time.Millisecond) // polls B while A fires
	}
	if strings.Contains(b.Out.String(), "Herald is listening") {
		t.Fatal("B serves the API while A holds the lease")
	}

	a.Signal(syscall.SIGTERM)
	if exited, err := a.Wait(time.Minute); !exited || err != nil {
		t.Fatalf("A after SIGTERM: exited %v (%v)", exited, err)
	}
	handed := time.Now()
	url := b.API(30 * time.Second)
	took := time.Since(handed)
	waitFor(t, func() bool { code, _ := readyz(t, b.OpsURL); return code == 200 })
	if held := scrape(t, b.OpsURL)["herald_control_lease_held"]; held != 1 {
		t.Errorf("B's herald_control_lease_held %v once it took over", held)
	}
	atHandover := mails()
	fired, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := smtp.Await(fired, atHandover+2*subs); err != nil { // two instants fire from B
		t.Fatalf("B mailed %d in a minute", mails()-atHandover)
	}
	// Every instant mailed once: as many mails as runs delivered, and no
	// Message-ID twice.
	waitFor(t, func() bool {
		return runStates(t, bDir)["delivered"] == mails()
	})
	noMailTwice(t, smtp)
	if r := newBrowserAs(t, url).do("GET", "/svc/projects/"+pid+"/users/"+uid(profile)+"/subscriptions", ""); r.status != 200 {
		t.Errorf("A's subscriptions on B: %d %s", r.status, r.body)
	}
	t.Logf("A mailed %d while B waited; B served %v after A stopped and mailed %d since",
		atHandover-start, took.Round(time.Millisecond), mails()-atHandover)
}

// noMailTwice fails t for each Message-ID the SMTP server accepted more
// than once, and returns how many distinct ones it accepted.
func noMailTwice(t *testing.T, smtp *channeltest.SMTPServer) int {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range smtp.Messages() {
		if seen[m.MessageID] {
			t.Errorf("Message-ID %s twice", m.MessageID)
		}
		seen[m.MessageID] = true
	}
	return len(seen)
}

// waitReplicated waits until the control process whose operator's listener
// is opsURL says its replica took the database after since.
func waitReplicated(t *testing.T, opsURL string, since time.Time) {
	t.Helper()
	waitFor(t, func() bool {
		age, ok := scrape(t, opsURL)["herald_replica_sync_age_seconds"]
		return ok && age < time.Since(since).Seconds()
	})
}

// demoPID is the id of the demo project process p set up at its start.
func demoPID(t *testing.T, p *apptest.Process) string {
	t.Helper()
	m := demoProject.FindStringSubmatch(p.Out.String())
	if m == nil {
		t.Fatalf("no demo project:\n%s", p.Out.String())
	}
	return m[1]
}

// demoAnswers logs in to the API at url as the domain admin and returns the
// data of each report of the demo project pid, by title.
func demoAnswers(t *testing.T, url, pid string) map[string]*client.XTab {
	t.Helper()
	c := client.New(url)
	if _, err := c.Login(context.Background(), "admin@herald.local", apptest.AdminPassword); err != nil {
		t.Fatal(err)
	}
	_, answers := executeDemoReports(t, c, pid)
	return answers
}

// runStates counts the runs by state in the database of the data folder dir.
func runStates(t *testing.T, dir string) map[string]int {
	t.Helper()
	runs, _ := (&drill{t: t, dir: dir}).states()
	return runs
}

// TestBackupOfAProcessUnderLoad: herald backup of the demo process while it
// takes requests, reloads its sales and executes reports restores, through
// herald restore, into a folder where the process starts, its reports
// answer what the original's did, and the demo subscription is armed and
// mails when sent now.
func TestBackupOfAProcessUnderLoad(t *testing.T) {
	gate.Long(t)
	if testing.Short() {
		t.Skip("runs the herald binary")
	}
	dir := t.TempDir()
	p := apptest.StartDemoProcess(t, dir, "HERALD_LOG_ACCESS=off")
	pid := demoPID(t, p)
	want := demoAnswers(t, p.URL, pid)

	stop := make(chan struct{})
	load := underLoad(t, p.URL, pid, stop)
	time.Sleep(2 * time.Second) // the load is under way
	out := filepath.Join(t.TempDir(), "backup.tar")
	began := time.Now()
	backup := exec.Command(apptest.Binary(t), "backup", "--data", dir, "--to", out)
	said, err := backup.CombinedOutput()
	took := time.Since(began)
	if err != nil || !strings.Contains(string(said), "(a running process)") {
		t.Fatalf("herald backup: %v\n%s", err, said)
	}
	time.Sleep(time.Second) // the load goes on past the backup
	close(stop)
	counts := load()
	p.Signal(syscall.SIGTERM)
	if exited, err := p.Wait(time.Minute); !exited || err != nil {
		t.Fatalf("after SIGTERM: %v %v", exited, err)
	}

	if said, err := exec.Command(apptest.Binary(t), "restore", "--from", out, "--data", dir).CombinedOutput(); err == nil ||
		!strings.Contains(string(said), "is not empty") {
		t.Errorf("herald restore into a folder in use: %v\n%s", err, said)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if said, err := exec.Command(apptest.Binary(t), "restore", "--from", out, "--data", restored).CombinedOutput(); err != nil {
		t.Fatalf("herald restore: %v\n%s", err, said)
	}
	q := apptest.StartProcess(t, restored, "HERALD_LOG_ACCESS=off")
	got := demoAnswers(t, q.URL, pid)
	for title, x := range want {
		if got[title] == nil || !reflect.DeepEqual(got[title].Data, x.Data) || got[title].OverallSize != x.OverallSize {
			t.Errorf("%s answers otherwise on the restored folder", title)
		}
	}
	// The engine armed the subscription, and sending it now mails what its
	// instant would, without waiting up to a minute for that instant.
	if !strings.Contains(q.Out.String(), "subscriptions=1 triggers=1") {
		t.Errorf("the restored process armed no subscription:\n%s", tail(q.Out.String(), 2000))
	}
	qa := newBrowserAs(t, q.URL)
	profile := qa.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	subs := qa.do("GET", "/svc/projects/"+pid+"/users/"+uid(profile)+"/subscriptions", "").json(t)
	items := dig(subs, "subscriptions", "items").([]any)
	if len(items) != 1 {
		t.Fatalf("%d subscriptions on the restored folder, want the demo's one", len(items))
	}
	// The demo's subscription fires each minute: a send now in that second is
	// refused with 429, try again, as it is for any client, which then does.
	send := dig(items[0], "subscription", "meta", "uri").(string) + "/send"
	waitForWithin(t, 5*time.Second, func() bool {
		r := qa.do("POST", send, "")
		if r.status == 429 {
			return false
		}
		wantStatus(t, r, 202)
		return true
	})
	mail := waitForMail(t, filepath.Join(restored, "outbox"))
	if !strings.Contains(mail, "Revenue so far: ") {
		t.Errorf("the demo subscription's mail on the restored folder:\n%.1000s", mail)
	}
	t.Logf("herald backup of a process under load (%v) took %v; %s", counts, took.Round(time.Millisecond), strings.TrimSpace(string(said)))
}

// underLoad keeps the demo process at url busy until stop is closed: a
// writer creates channels, a loader reloads the demo's sales (the same
// rows, a new data version each time), a reader executes a report. It
// returns what waits for them and says how much each did.
func underLoad(t *testing.T, url, pid string, stop <-chan struct{}) func() map[string]int {
	t.Helper()
	sales, err := os.ReadFile("../testdata/demo/sales.csv")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := client.New(url)
	if _, err := c.Login(ctx, "admin@herald.local", apptest.AdminPassword); err != nil {
		t.Fatal(err)
	}
	b := newBrowserAs(t, url)
	profile := b.do("GET", "/svc/account/profile/current", "").header.Get("Location")
	jar := b.hc.Jar
	var mu sync.Mutex
	counts := map[string]int{}
	count := func(what string, ok bool) {
		if ok {
			mu.Lock()
			counts[what]++
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	loop := func(what string, do func(hc *http.Client, i int) bool) {
		wg.Go(func() {
			hc := &http.Client{Jar: jar, Timeout: time.Minute}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				count(what, do(hc, i))
			}
		})
	}
	post := func(hc *http.Client, path, ctype, body string) bool {
		req, _ := http.NewRequest("POST", url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode/100 == 2
	}
	loop("channels", func(hc *http.Client, i int) bool {
		return post(hc, profile+"/channelConfigurations", "application/json", fmt.Sprintf(
			`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"load%d@example.com"}},"meta":{"title":"Load %d"}}}`, i, i))
	})
	loop("loads", func(hc *http.Client, _ int) bool {
		return post(hc, "/svc/md/"+pid+"/datasets/dataset.sales/data?mode=full", "text/csv", string(sales))
	})
	loop("executions", func(*http.Client, int) bool {
		return executeDemoReportsQuiet(c, pid)
	})
	return func() map[string]int {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return counts
	}
}

// executeDemoReportsQuiet executes the demo's reports and reports whether
// they all answered.
func executeDemoReportsQuiet(c *client.Client, pid string) bool {
	ctx := context.Background()
	var list struct {
		Query struct {
			Entries []struct{ Link, Title string }
		}
	}
	if err := c.Do(ctx, "GET", "/svc/md/"+pid+"/query/reports", nil, &list); err != nil {
		return false
	}
	for _, e := range list.Query.Entries {
		res, err := c.ExecuteReport(ctx, e.Link)
		if err != nil {
			return false
		}
		if _, err := c.DataResult(ctx, res.Content.DataResult); err != nil {
			return false
		}
	}
	return true
}
