package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/sms"
)

// scrape reads the operator's listener's /metrics into a map from series (name and
// labels as exposed, labels sorted by name) to value.
func scrape(t *testing.T, opsURL string) map[string]float64 {
	t.Helper()
	m, err := apptest.Metrics(opsURL)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return m
}

// TestMetricsTellAFire fires a subscription whose e-mail is accepted and whose SMS is
// refused for good, then finds both outcomes, the run, the scheduler's lateness and the
// API's requests on /metrics.
func TestMetricsTellAFire(t *testing.T) {
	gate.Parallel(t)
	smtp := channeltest.NewSMTPServer(t)
	tw := channeltest.NewTwilioServer(t)
	w := newSubWorldWith(t, func(c *app.Config) {
		sec := smtpOf(c)
		sec.Host, sec.Port, sec.TLSPolicy, sec.From = smtp.Host(), smtp.Port(), "none", "alerts@herald.test"
		c.Channels["sms"].(*sms.Settings).BaseURL = tw.URL()
	})
	r := w.jane.do("POST", w.janeURI+"/channelConfigurations",
		`{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"`+tw.AccountSID()+`","password":"`+
			tw.AuthToken()+`","from":"+15005550006","to":"+420601234567"}},"meta":{"title":"Phone"}}}`)
	wantStatus(t, r, 201)
	sms := r.json(t)["channelConfiguration"].(map[string]any)["meta"].(map[string]any)["uri"].(string)
	tw.FailNext(1, 400, 21211) // invalid To: a permanent refusal
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
		s["condition"] = map[string]any{"condition": map[string]any{"expression": "true"}}
		s["channels"] = []any{w.channel, sms}
		s["attachments"] = []any{map[string]any{"report": w.report, "formats": []any{"csv"}}}
	})
	r = w.jane.do("POST", w.subsBase, body)
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)

	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool {
		items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["run"].(map[string]any)["state"] == "partially_failed"
	})

	md := &mdClient{t: t, b: w.admin, pid: w.pid, md: "/svc/md/" + w.pid}
	md.validate("LDM") // a maintenance task

	m := scrape(t, w.b.App.OpsURL())
	deployedNamesExist(t, m)
	exposedNamesDocumented(t, m)
	for series, want := range map[string]float64{
		`herald_engine_runs_total{state="queued"}`:                                              1,
		`herald_worker_deliveries_total{kind="email",result="sent"}`:                            1,
		`herald_worker_deliveries_total{kind="sms",result="failed"}`:                            1,
		`herald_worker_send_attempts_total{kind="email",result="ok"}`:                           1,
		`herald_worker_send_attempts_total{kind="sms",result="error"}`:                          1,
		`herald_worker_send_duration_seconds_count{kind="email"}`:                               1,
		`herald_scheduler_lateness_seconds_count`:                                               1,
		`herald_worker_outbox_depth`:                                                            0,
		`herald_worker_consumer_pending_messages{kind="email"}`:                                 0,
		`herald_http_requests_total{method="POST",route="POST /svc/projects/{$}",status="201"}`: 1,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	if m[`herald_engine_metric_executions_total`] < 1 {
		t.Errorf("no metric execution counted")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s missing: the Go and process collectors are not registered", name)
		}
	}

	// The debug log of all that names the run and its deliveries and holds no secret:
	// no password, no provider credential, no token.
	log := w.b.Log.String()
	if !strings.Contains(log, "run=") || !strings.Contains(log, "deliveries=") || !strings.Contains(log, "delivery=") {
		t.Errorf("the log does not tell the run's story:\n%s", log)
	}
	secrets := []string{apptest.AdminPassword, "S3cret-pass", tw.AuthToken()}
	x := newBrowser(t, w.b.URL, "ua")
	for _, r := range []reply{x.login("jane@example.com", "S3cret-pass"), x.do("GET", "/svc/account/token", "")} {
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			secrets = append(secrets, c.Value)
		}
	}
	wantStatus(t, x.do("GET", w.subsBase, ""), 200)
	log = w.b.Log.String()
	if len(secrets) < 5 {
		t.Fatalf("expected the session's tokens among the secrets: %d", len(secrets))
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(log, s) {
			t.Errorf("the log holds a secret %.6s…", s)
		}
	}
}

// readyz asks the operator's listener whether the process is ready.
func readyz(t *testing.T, opsURL string) (int, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", opsURL+"/readyz", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("readyz body %q: %v", data, err)
	}
	return res.StatusCode, body
}

// startNATS runs a NATS server with JetStream on port (0: any) keeping its store in dir.
func startNATS(t *testing.T, dir string, port int) *server.Server {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return srv
}

// TestReadyzFollowsNATS runs Herald over an external NATS server, stops the server and
// sees /readyz answer 503 naming NATS, then starts it again and sees 200.
func TestReadyzFollowsNATS(t *testing.T) {
	gate.Long(t)
	dir := t.TempDir()
	ns := startNATS(t, dir, 0)
	port := ns.Addr().(*net.TCPAddr).Port
	b := apptest.Start(t, func(c *app.Config) { c.NATS.URL = ns.ClientURL() })
	ops := b.App.OpsURL()
	waitFor(t, func() bool { code, _ := readyz(t, ops); return code == 200 })
	_, body := readyz(t, ops)
	for _, c := range []string{"sqlite", "nats", "stream", "scheduler", "warehouse"} {
		if body["checks"].(map[string]any)[c] != "ok" {
			t.Errorf("check %s = %v", c, body["checks"])
		}
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	code, body := readyz(t, ops)
	checks := body["checks"].(map[string]any)
	if code != 503 || body["ready"] != false || checks["nats"] == "ok" && checks["stream"] == "ok" {
		t.Fatalf("with NATS down: %d %v", code, body)
	}
	if res, err := http.Get(ops + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz with NATS down: %v %v", res, err)
	}

	ns = startNATS(t, dir, port)
	defer ns.Shutdown()
	waitFor(t, func() bool { code, _ := readyz(t, ops); return code == 200 })
}

// exposedNamesDocumented checks that every herald_ metric family in m is in
// docs/operations.md's table.
func exposedNamesDocumented(t *testing.T, m map[string]float64) {
	t.Helper()
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for series := range m {
		name, _, _ := strings.Cut(series, "{")
		if !strings.HasPrefix(name, "herald_") {
			continue
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			name = strings.TrimSuffix(name, suffix)
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/operations.md does not name %s, which Herald exposes", name)
		}
	}
}

// deployedNamesExist checks that every metric the Grafana dashboard and the Prometheus
// alerts in deploy/ use is one a running Herald exposes in m.
func deployedNamesExist(t *testing.T, m map[string]float64) {
	t.Helper()
	// A control process on a shared cluster exposes these two beside the rest;
	// TestStandbyFiresNothingWhileTheLeaseIsHeld reads them there.
	exposed := map[string]bool{"herald_control_lease_held": true, "herald_replica_sync_age_seconds": true}
	for series := range m {
		name, _, _ := strings.Cut(series, "{")
		exposed[name] = true
	}
	re := regexp.MustCompile(`\b(?:herald|go|process)_[a-z_]+`)
	for _, file := range []string{"../deploy/grafana/herald.json", "../deploy/prometheus/alerts.yml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		names := re.FindAllString(string(data), -1)
		if len(names) < 10 {
			t.Fatalf("%s: only %d metric names found", file, len(names))
		}
		for _, name := range names {
			if !exposed[name] {
				t.Errorf("%s uses %s, which Herald does not expose", file, name)
			}
		}
	}
}

// TestAccessLogLevelAndSample logs no successful request when the sample is 0, and still
// logs a failed one, with its request id, route, status, bytes and duration.
func TestAccessLogLevelAndSample(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t, func(c *app.Config) { c.Log.Access, c.Log.AccessSample = "info", 0 })
	br := newBrowser(t, b.URL, "ua")
	br.loginWithToken(b.Config.AdminLogin, apptest.AdminPassword)
	wantStatus(t, br.do("GET", "/svc/projects/nope", ""), 404)
	var ok, failed int
	for line := range strings.Lines(b.Log.String()) {
		if !strings.Contains(line, "msg=request ") {
			continue
		}
		if strings.Contains(line, "status=200") {
			ok++
		}
		if strings.Contains(line, "status=404") {
			failed++
			for _, f := range []string{"level=INFO", "requestId=", `route="GET /svc/projects/{pid}"`, "bytes=", "duration="} {
				if !strings.Contains(line, f) {
					t.Errorf("access line lacks %s: %s", f, line)
				}
			}
		}
	}
	if ok != 0 || failed != 1 {
		t.Errorf("%d successful and %d failed requests logged, want 0 and 1:\n%s", ok, failed, b.Log.String())
	}
}

// TestEngineLogsInBeforeTheFirstFire: the engine's service account logs in
// when the service starts, so the first fire's executions neither wait for a
// password check nor get turned away first.
func TestEngineLogsInBeforeTheFirstFire(t *testing.T) {
	gate.Parallel(t)
	w := newSubWorld(t)
	const logins = `herald_http_requests_total{method="POST",route="POST /svc/account/login",status="200"}`
	before := scrape(t, w.b.App.OpsURL())[logins]
	body := w.body(t, func(s map[string]any) {
		s["triggers"] = []any{map[string]any{"timerEvent": map[string]any{"cronExpression": "0 */5 * * * *"}}}
	})
	r := w.jane.do("POST", w.subsBase, body)
	wantStatus(t, r, 201)
	uri := r.json(t)["subscription"].(map[string]any)["meta"].(map[string]any)["uri"].(string)

	w.b.Clock.Advance(5 * time.Minute)
	waitFor(t, func() bool {
		items := w.jane.do("GET", uri+"/runs", "").json(t)["runs"].(map[string]any)["items"].([]any)
		return len(items) == 1 && items[0].(map[string]any)["run"].(map[string]any)["state"] != "running"
	})
	m := scrape(t, w.b.App.OpsURL())
	if m[`herald_engine_metric_executions_total`] < 1 {
		t.Fatal("the fire executed no metric")
	}
	if m[logins] != before {
		t.Errorf("%v logins during the fire, want none: the engine was not logged in", m[logins]-before)
	}
	for series, n := range m {
		if strings.HasPrefix(series, "herald_http_requests_total{") && strings.Contains(series, `status="401"`) && n > 0 {
			t.Errorf("%s = %v: a request was turned away", series, n)
		}
	}
}
