//go:build bench

package recovery

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/internal/natstest"
)

const (
	subscriptions = 1000
	perWorker     = 40 // mails a second
	// syncInterval is replica.syncInterval of the drill, its default: the
	// bound the recovery point is held to.
	syncInterval = time.Second
	// finalWithin is how long after its start the replacement may take to
	// make every run final.
	finalWithin = 60 * time.Second
)

// BenchmarkControlMachineLost runs, in each iteration, the drill twice on
// fresh clusters and folders: the baseline, A killed and started again on
// its own folder (the recovery there was before the replica), and the
// loss, A killed, its folder deleted and B started on an empty one. The
// order alternates between iterations. It reports the medians and the
// worst of each figure and the ratio of the two recovery times.
func BenchmarkControlMachineLost(b *testing.B) {
	var restarts, losses []result
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			lost := (i+k)%2 == 1
			r := drill(b, lost)
			b.Logf("run %d, %s: %s", i+1, r.kind(), r)
			if lost {
				losses = append(losses, r)
			} else {
				restarts = append(restarts, r)
			}
		}
	}
	rto := median(losses, result.rtoOf)
	base := median(restarts, result.rtoOf)
	rpo := slices.Max(mapped(losses, result.rpoOf))
	final := slices.Max(mapped(losses, result.finalOf))
	b.ReportMetric(base.Seconds(), "rto-restart-s")
	b.ReportMetric(rto.Seconds(), "rto-lost-s")
	b.ReportMetric(rto.Seconds()/base.Seconds(), "rto-ratio")
	b.ReportMetric(median(losses, result.rpoOf).Seconds(), "rpo-lost-s")
	b.ReportMetric(rpo.Seconds(), "rpo-lost-max-s")
	b.ReportMetric(median(restarts, result.rpoOf).Seconds(), "rpo-restart-s")
	b.ReportMetric(final.Seconds(), "final-lost-max-s")
	b.ReportMetric(float64(slices.Max(mapped(losses, result.dupsOf))), "dups-lost-max")
	b.Logf("RTO, kill to /readyz 200: lost machine %v, restart on the same folder %v (median of %d): %.1f× the restart",
		rto.Round(time.Millisecond), base.Round(time.Millisecond), len(losses), rto.Seconds()/base.Seconds())
	b.Logf("RPO of the lost machine, worst %v against replica.syncInterval %v: %s; every run final at worst %v after the kill, "+
		"within %v of B's start: %s", rpo.Round(time.Millisecond), syncInterval, verdict(rpo <= syncInterval),
		final.Round(time.Millisecond), finalWithin, verdict(slices.Max(mapped(losses, result.startedFinal)) <= finalWithin))
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

func mapped[T any](rs []result, f func(result) T) []T {
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func median(rs []result, f func(result) time.Duration) time.Duration {
	ds := mapped(rs, f)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// result is one drill's figures, from the kill of A.
type result struct {
	lost     bool          // A's folder was deleted and B started on an empty one
	rpo      time.Duration // how old the newest change the replacement has was at the kill
	gone     int           // changes A answered and the replacement does not have
	started  time.Duration // until the replacement started (it was started at once)
	api      time.Duration // until the replacement's API listened
	ready    time.Duration // until its /readyz answered 200
	final    time.Duration // until every run was final and every mail in
	restored string        // what B said it restored
	mails    int           // mails accepted before the kill
	dups     int
}

func (r result) rpoOf() time.Duration        { return r.rpo }
func (r result) rtoOf() time.Duration        { return r.ready }
func (r result) finalOf() time.Duration      { return r.final }
func (r result) startedFinal() time.Duration { return r.final - r.started }
func (r result) dupsOf() int                 { return r.dups }

func (r result) kind() string {
	if r.lost {
		return "machine lost, B on an empty folder"
	}
	return "restart on the same folder"
}

func (r result) String() string {
	s := fmt.Sprintf("killed after %d of %d mails; RPO %v (%d changes lost); API at %v, ready at %v, every run final at %v "+
		"after the kill; %d duplicates", r.mails, subscriptions, r.rpo.Round(time.Millisecond), r.gone,
		r.api.Round(time.Millisecond), r.ready.Round(time.Millisecond), r.final.Round(time.Millisecond), r.dups)
	if r.restored != "" {
		s += "; restored " + r.restored
	}
	return s
}

// scope is the benchmark as one drill's processes and servers see it: what
// they clean up runs when the drill ends, not when the benchmark does, so
// that no drill runs beside the processes of the one before.
type scope struct {
	testing.TB
	fns []func()
}

func (s *scope) Cleanup(f func()) { s.fns = append(s.fns, f) }

func (s *scope) close() {
	for i := len(s.fns) - 1; i >= 0; i-- {
		s.fns[i]()
	}
}

// drill runs the drill once on a cluster of its own: with lost, A's folder
// is deleted and B starts on an empty one; without, A starts again on its
// folder.
func drill(b *testing.B, lost bool) result {
	b.Helper()
	t := &scope{TB: b}
	defer t.close()
	cluster := natstest.Start(t, 3)
	smtp := channeltest.NewSMTPServer(t)
	shared := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_NATS_REPLICAS=3", "HERALD_DELIVERY_LEDGER=jetstream",
		"HERALD_DELIVERY_KEYFILE=" + keyFile(b), "HERALD_DELIVERY_ACKWAIT=2s", "HERALD_LOG_ACCESS=off", "HERALD_LOG_LEVEL=warn",
		"HERALD_SMTP_HOST=" + smtp.Host(), fmt.Sprintf("HERALD_SMTP_PORT=%d", smtp.Port()), "HERALD_SMTP_TLSPOLICY=none",
		"HERALD_SMTP_FROM=alerts@herald.test", "HERALD_SUBSCRIPTIONS_MAXPERUSER=5000", "HERALD_SUBSCRIPTIONS_MAXPERPROJECT=5000",
		"HERALD_SUBSCRIPTIONS_MAXCHANNELSPERUSER=20000"}
	control := append(slices.Clone(shared), "HERALD_ROLES=api,engine",
		"HERALD_REPLICA_URL="+cluster.Nodes[0].ClientURL+"/HERALD_REPLICA", "HERALD_REPLICA_SYNCINTERVAL="+syncInterval.String())
	a := apptest.StartProcess(t, b.TempDir(), control...)
	admin := login(b, a.URL)
	at := burst(b, admin)
	for range 2 {
		w := apptest.StartProcess(t, b.TempDir(), append(slices.Clone(shared), "HERALD_ROLES=worker",
			fmt.Sprintf("HERALD_SMTP_RATE=%d", perWorker))...)
		waitReady(b, w.OpsURL, time.Minute)
	}
	stop := make(chan struct{})
	changes := changeEvery(admin, 50*time.Millisecond, stop)
	poll(b, time.Until(at)+2*time.Minute, "half the mails", func() bool { return len(smtp.Messages()) >= subscriptions/2 })
	r := result{lost: lost, mails: len(smtp.Messages())}
	a.KillAll() // with its replicator
	killed := time.Now()
	close(stop)
	dir := a.Dir
	if lost {
		if err := os.RemoveAll(a.Dir); err != nil {
			b.Fatal(err)
		}
		dir = b.TempDir()
	}
	began := time.Now()
	p := apptest.StartProcess(t, dir, control...)
	r.started = began.Sub(killed)
	url := p.API(2 * time.Minute)
	r.api = time.Since(killed)
	waitReady(b, p.OpsURL, time.Minute)
	r.ready = time.Since(killed)
	if m := regexp.MustCompile(`Restored from (.*)`).FindStringSubmatch(p.Out.String()); m != nil {
		r.restored = strings.TrimSpace(m[1])
	}
	poll(b, 2*time.Minute, "every run final", func() bool { return final(b, dir, smtp) })
	r.final = time.Since(killed)
	seen := map[string]int{}
	for _, m := range smtp.Messages() {
		seen[m.MessageID]++
	}
	for _, n := range seen {
		r.dups += n - 1
	}
	made := changes()
	again := login(b, url)
	r.rpo, r.gone = -1, len(made)
	for i := len(made) - 1; i >= 0; i-- {
		if status(again, url+made[i].uri) == 200 {
			r.rpo, r.gone = max(killed.Sub(made[i].at), 0), len(made)-1-i
			break
		}
	}
	if r.rpo < 0 {
		b.Fatalf("none of the %d changes made on A is on its replacement", len(made))
	}
	return r
}

// poll calls done every 20 ms until it reports true, for up to within.
func poll(b *testing.B, within time.Duration, what string, done func() bool) {
	b.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(within)
	for !done() {
		select {
		case <-tick.C:
		case <-deadline:
			b.Fatalf("%s: not within %v", what, within)
		}
	}
}

// client is an HTTP client logged in as the domain admin.
type client struct {
	hc      *http.Client
	root    string // the API's URL
	profile string // the user's profile, a URL
}

func login(b *testing.B, url string) *client {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	c := &client{root: url, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	body := `{"postUserLogin":{"login":"admin@herald.local","password":"` + apptest.AdminPassword + `","remember":0}}`
	if s, m := do(c, "POST", url+"/svc/account/login", body); s != 200 {
		b.Fatalf("login: %d %v", s, m)
	}
	if s, m := do(c, "GET", url+"/svc/account/token", ""); s != 200 {
		b.Fatalf("token: %d %v", s, m)
	}
	req, _ := http.NewRequest("GET", url+"/svc/account/profile/current", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 {
		b.Fatalf("current profile: %d", resp.StatusCode)
	}
	c.profile = url + resp.Header.Get("Location")
	return c
}

// do sends a JSON request and returns the status and the decoded body; 0
// when the request failed.
func do(c *client, method, url, body string) (int, map[string]any) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = json.Unmarshal(data, &m)
	return resp.StatusCode, m
}

func status(c *client, url string) int {
	s, _ := do(c, "GET", url, "")
	return s
}

// channelURI is the URI of the channel configuration a POST answered.
func channelURI(m map[string]any) string {
	c, _ := m["channelConfiguration"].(map[string]any)
	meta, _ := c["meta"].(map[string]any)
	uri, _ := meta["uri"].(string)
	return uri
}

// burst makes the subscriptions, each with a channel of its own, due at one
// instant far enough ahead, and returns the instant.
func burst(b *testing.B, c *client) time.Time {
	b.Helper()
	s, m := do(c, "POST", c.root+"/svc/projects/", `{"project":{"meta":{"title":"Drill"}}}`)
	if s != 201 {
		b.Fatalf("project: %d %v", s, m)
	}
	subs := c.root + m["uri"].(string) + "/users/" + c.profile[strings.LastIndex(c.profile, "/")+1:] + "/subscriptions"
	chans := make([]string, subscriptions)
	parallel(b, func(i int) error {
		s, m := do(c, "POST", c.profile+"/channelConfigurations", fmt.Sprintf(
			`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"team%d@example.com"}},"meta":{"title":"Mail %d"}}}`, i, i))
		if s != 201 {
			return fmt.Errorf("channel %d: %d %v", i, s, m)
		}
		chans[i] = channelURI(m)
		return nil
	})
	at := time.Now().UTC().Add(40 * time.Second).Truncate(time.Second)
	cron := fmt.Sprintf("%d %d %d * * *", at.Second(), at.Minute(), at.Hour())
	parallel(b, func(i int) error {
		s, m := do(c, "POST", subs, fmt.Sprintf(`{"subscription":{"triggers":[{"timerEvent":{"cronExpression":%q}}],`+
			`"condition":{"condition":{"expression":"true"}},"subject":{"template":{"expression":"Drill %d"}},`+
			`"message":{"template":{"expression":"Number %d"}},"channels":[%q],"meta":{"title":"S%d"}}}`, cron, i, i, chans[i], i))
		if s != 201 {
			return fmt.Errorf("subscription %d: %d %v", i, s, m)
		}
		return nil
	})
	if time.Now().After(at.Add(-2 * time.Second)) {
		b.Fatalf("making the subscriptions took past the instant %v", at)
	}
	return at
}

// parallel runs f for each subscription, eight at a time, and fails b with
// the first error.
func parallel(b *testing.B, f func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, 8)
	for i := range subscriptions {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

// change is a channel changeEvery made, and when the API said so.
type change struct {
	uri string
	at  time.Time
}

// changeEvery creates a channel every d until stop is closed, and returns
// what returns, once it stopped, the channels made.
func changeEvery(c *client, d time.Duration, stop <-chan struct{}) func() []change {
	var out []change
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			s, m := do(c, "POST", c.profile+"/channelConfigurations", fmt.Sprintf(
				`{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"change%d@example.com"}},"meta":{"title":"Change %d"}}}`, i, i))
			if uri := channelURI(m); s == 201 && uri != "" {
				out = append(out, change{uri: uri, at: time.Now()})
			}
		}
	}()
	return func() []change {
		<-done
		return out
	}
}

// waitReady polls /readyz until it answers 200.
func waitReady(b *testing.B, ops string, within time.Duration) {
	b.Helper()
	poll(b, within, ops+"/readyz 200", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", ops+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// final reports whether every run and mail of the burst is final in the
// database of dir and every mail arrived.
func final(b *testing.B, dir string, smtp *channeltest.SMTPServer) bool {
	b.Helper()
	distinct := map[string]bool{}
	for _, m := range smtp.Messages() {
		distinct[m.MessageID] = true
	}
	if len(distinct) < subscriptions {
		return false
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "herald.db")+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var runs, sent int
	_ = db.QueryRow(`SELECT count(*) FROM runs WHERE state = 'delivered'`).Scan(&runs)
	_ = db.QueryRow(`SELECT count(*) FROM deliveries WHERE state = 'sent'`).Scan(&sent)
	return runs == subscriptions && sent == subscriptions
}

// keyFile writes a delivery key for the drill's processes.
func keyFile(b *testing.B) string {
	b.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	path := filepath.Join(b.TempDir(), "delivery.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}
