package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// testExec stands in for the analytics service: each metric yields the next
// value of its sequence (the last one repeats), and calls are counted, with
// the principals they were made as.
type testExec struct {
	mu          sync.Mutex
	values      map[string][]float64
	calls       map[string]int
	reportCalls map[string]int // executions by report
	exportCalls map[string]int // files by "result format"
	exportTime  time.Duration  // how long each export takes
	principals  map[Principal]int
	fail        error
	filters     map[string]Filters       // user filters by user id
	burst       []BurstRow               // the rows of every burst's report
	sliced      map[string]float64       // a metric's value by the slice's conditions, beside values
	garble      string                   // a format whose files come out unreadable
	took        map[string]time.Duration // how long a metric's execution takes, within its context
	inFlight    int                      // metric executions under way
}

func newTestExec() *testExec {
	return &testExec{values: map[string][]float64{}, calls: map[string]int{}, reportCalls: map[string]int{}, exportCalls: map[string]int{},
		principals: map[Principal]int{}, filters: map[string]Filters{}, sliced: map[string]float64{}}
}

func (x *testExec) UserFilters(_ context.Context, _, user string) (Filters, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.filters[user], nil
}

func (x *testExec) ProjectFilters(context.Context, string) (map[string]Filters, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return maps.Clone(x.filters), nil
}

func (x *testExec) BurstRows(_ context.Context, p Principal, report, address, by string) (iter.Seq2[BurstRow, error], error) {
	x.mu.Lock()
	x.principals[p]++
	x.reportCalls[report]++
	rows := slices.Clone(x.burst)
	x.mu.Unlock()
	return func(yield func(BurstRow, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}, nil
}

func (x *testExec) set(uri string, vs ...float64) {
	x.mu.Lock()
	x.values[uri] = vs
	x.mu.Unlock()
}

func (x *testExec) EvaluateMetric(ctx context.Context, p Principal, uri string) (Value, error) {
	x.mu.Lock()
	took := x.took[uri]
	x.inFlight++
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		x.inFlight--
		x.mu.Unlock()
	}()
	if took > 0 {
		select {
		case <-time.After(took):
		case <-ctx.Done():
			return Value{}, ctx.Err()
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.principals[p]++
	if x.fail != nil {
		return Value{}, x.fail
	}
	n := x.calls[uri]
	x.calls[uri]++
	if v, ok := x.sliced[uri+" "+p.Filters.String()]; ok {
		return Value{Number: v, Format: "#,##0.00"}, nil
	}
	vs, ok := x.values[uri]
	if !ok {
		return Value{}, fmt.Errorf("no metric %s", uri)
	}
	return Value{Number: vs[min(n, len(vs)-1)], Format: "#,##0.00"}, nil
}

func (x *testExec) ExecuteReport(_ context.Context, p Principal, uri string) (ReportResult, error) {
	x.mu.Lock()
	x.principals[p]++
	x.reportCalls[uri]++
	x.mu.Unlock()
	id := uri + "/result"
	if f := p.Filters.String(); f != "" {
		id += "?" + f // a result of its own per slice, as the analytics service makes them
	}
	return ReportResult{ID: id, Title: "Report", Chart: true}, nil
}

func (x *testExec) ExportReport(_ context.Context, p Principal, res ReportResult, format string, w io.Writer) (Export, error) {
	x.mu.Lock()
	x.principals[p]++
	x.exportCalls[res.ID+" "+format]++
	took := x.exportTime
	x.mu.Unlock()
	time.Sleep(took)
	data := string(signatures[format]) + " " + res.ID + " " + format // a file that starts as its format's do
	if format == x.garble {
		data = "<html>Internal error</html>"
	}
	if format == "HTML" {
		data = "<table><tr><td>" + res.ID + "</td></tr></table>" + render.ChartSlot
	}
	if _, err := io.WriteString(w, data); err != nil {
		return Export{}, err
	}
	return Export{Name: "Report." + strings.ToLower(format), ContentType: render.ContentType(format)}, nil
}

// ExecuteReportAfter keeps the rows after day after: a result of its own,
// whose latest day is ten days later.
func (x *testExec) ExecuteReportAfter(ctx context.Context, p Principal, uri, attr string, after int64) (ReportResult, int64, error) {
	res, err := x.ExecuteReport(ctx, p, uri)
	res.ID += fmt.Sprintf("/after/%d", after)
	return res, after + 10, err
}

// executions counts the calls of every kind made as p.
func (x *testExec) executions(p Principal) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.principals[p]
}

func (x *testExec) total() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, c := range x.calls {
		n += c
	}
	return n
}

// testBundle is a real store with a project, an owner who is an enabled
// member (its admin), an e-mail and an SMS channel of the owner, and the
// project's metadata: metrics /svc/md/p1/obj/1 to 8 and 10 to 20, and the
// report /svc/md/p1/obj/9.
type testBundle struct {
	st       *store.Store
	exec     *testExec
	dir      string
	project  string
	owner    string
	channels []string
}

func newBundle(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := &testBundle{st: st, exec: newTestExec(), dir: dir, project: "p1", owner: "u1"}
	now := time.Now()
	must(t, st.EnsureDomain(ctx, "default", now))
	must(t, st.CreateUser(ctx, store.User{ID: b.owner, Domain: "default", Login: "jane@example.com", PasswordHash: "x", Created: now, Updated: now}))
	must(t, st.CreateProject(ctx, store.Project{ID: b.project, Title: "P", State: store.ProjectEnabled, Author: b.owner,
		Contributor: b.owner, Created: now, Updated: now}, store.RoleAdmin))
	for i, kind := range []string{"email", "sms"} {
		id := fmt.Sprintf("c%d", i)
		must(t, st.CreateChannel(ctx, store.Channel{ID: id, Owner: b.owner, Kind: kind, Title: kind,
			Config: []byte(`{"to":"jane@example.com"}`), Created: now, Updated: now}, store.Quota{}))
		b.channels = append(b.channels, id)
	}
	for id := int64(1); id <= 20; id++ {
		cat := "metric"
		if id == 9 {
			cat = "report"
		}
		got, err := st.CreateObject(ctx, store.Object{ProjectID: b.project, Category: cat, Identifier: fmt.Sprint(cat, id), Title: fmt.Sprint(cat, id),
			Content: []byte("{}"), Author: b.owner, Contributor: b.owner, Created: now, Updated: now}, nil)
		must(t, err)
		if got != id {
			t.Fatalf("object %d has id %d", id, got)
		}
	}
	return b
}

// runFor runs an engine over the bundle for d of the bubble's time, until
// everything it started has settled; set changes its configuration. Call it
// inside synctest.Test.
func (b *testBundle) runFor(t *testing.T, d time.Duration, set ...func(*Config)) {
	t.Helper()
	e := b.engine(t, set...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(d)
	synctest.Wait()
	cancel()
	must(t, <-done)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (b *testBundle) engine(t *testing.T, set ...func(*Config)) *Engine {
	cfg := Config{FilesDir: filepath.Join(b.dir, "runs"), Workers: 4,
		Domain: notify.New(b.st, notify.DefaultConfig(), notify.Options{Domain: "default"})}
	for _, f := range set {
		f(&cfg)
	}
	e, err := New(b.st, b.exec, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	must(t, err)
	return e
}

// subscribe stores a subscription of the owner.
func (b *testBundle) subscribe(t *testing.T, id, cronExpr, cond, message string, mutate ...func(*store.Subscription)) store.Subscription {
	t.Helper()
	now := time.Now()
	s := store.Subscription{ID: id, ProjectID: b.project, Owner: b.owner, Title: "Watch " + id, Enabled: true,
		Channels: b.channels, Created: now, Updated: now,
		Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: cronExpr, Timezone: "UTC"}},
			Condition: cond, Message: message, FireMode: store.FireAlways}}
	for _, m := range mutate {
		m(&s)
	}
	must(t, b.st.CreateSubscription(context.Background(), s, store.Quota{}))
	return s
}

func (b *testBundle) runs(t *testing.T, sub string) []store.Run {
	t.Helper()
	runs, err := b.st.SubscriptionRuns(context.Background(), sub, 1000, 0)
	must(t, err)
	// oldest first
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs
}

func detailOf(t *testing.T, r store.Run) RunDetail {
	t.Helper()
	var d RunDetail
	must(t, json.Unmarshal(r.Detail, &d))
	return d
}

// fire runs one due instant the way the engine's pipeline runs many: claim,
// process, finish. A claim that exists already means another engine has the
// instant, and nothing happens.
func (e *Engine) fire(ctx context.Context, f Fire) {
	e.processAll(ctx, e.claim(ctx, []Fire{f}), func(f store.Finish) { e.finish(ctx, []store.Finish{f}) })
}

const m1 = "/svc/md/p1/obj/1"

func TestRunRendersAndHandsOver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 12345.5)
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "Revenue is ${f:executeMetric('"+m1+"')}",
			func(s *store.Subscription) {
				s.Def.Subject = "Revenue ${f:executeMetric('" + m1 + "')}"
				s.Def.Attachments = []store.ReportAttachment{{Report: "/svc/md/p1/obj/9", Formats: []string{"PDF"}}}
			})
		e := b.engine(t)
		at := time.Now().Add(time.Hour)
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: at})
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunQueued || !runs[0].ScheduledAt.Equal(at) {
			t.Fatalf("runs = %+v", runs)
		}
		d := detailOf(t, runs[0])
		if d.Text != "Revenue is 12,345.50" || d.Subject != "Revenue 12,345.50" || *d.Condition != true {
			t.Errorf("detail = %+v", d)
		}
		dels, err := b.st.RunDeliveries(context.Background(), runs[0].ID)
		must(t, err)
		if len(dels) != 2 {
			t.Fatalf("%d deliveries, want one per channel", len(dels))
		}
		for _, dl := range dels {
			// The PDF, and the chart the HTML shows inline.
			if dl.Payload.Text != d.Text || len(dl.Payload.Attachments) != 2 || dl.Payload.Attachments[1].ContentID == "" ||
				!strings.Contains(dl.Payload.HTML, `src="cid:`+dl.Payload.Attachments[1].ContentID+`"`) {
				t.Errorf("delivery payload = %+v", dl.Payload)
			}
			if data, err := os.ReadFile(dl.Payload.Attachments[0].Path); err != nil || !strings.HasPrefix(string(data), "%PDF") {
				t.Errorf("attachment file: %v", err)
			}
		}
		out, err := b.st.Outbox(context.Background(), 10)
		must(t, err)
		if len(out) != 2 {
			t.Errorf("%d outbox rows, want 2", len(out))
		}
	})
}

// TestRunNotTriggeredAndOnChange fires an onChange subscription at five
// instants, one at a time and as one worker's batch, whose runs are all
// processed before any is recorded: either way a run sees the condition the
// run before it saw.
func TestRunNotTriggeredAndOnChange(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := newBundle(t)
				b.exec.set(m1, 1, 20, 30, 5, 40)
				b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') gt 10", "now ${f:executeMetric('"+m1+"')}",
					func(s *store.Subscription) { s.Def.FireMode = store.FireOnChange })
				e := b.engine(t)
				ctx := context.Background()
				start := time.Now()
				var fires []Fire
				for i := range 5 {
					fires = append(fires, Fire{SubscriptionID: "s1", At: start.Add(time.Duration(i+1) * time.Hour)})
				}
				if batch {
					var fins []store.Finish
					e.processAll(ctx, e.claim(ctx, fires), func(f store.Finish) { fins = append(fins, f) })
					e.finish(ctx, fins)
				} else {
					for _, f := range fires {
						e.fire(ctx, f)
					}
				}
				var states []string
				for _, r := range b.runs(t, "s1") {
					states = append(states, r.State)
				}
				want := "not_triggered queued not_triggered not_triggered queued"
				if got := strings.Join(states, " "); got != want {
					t.Fatalf("states = %s, want %s", got, want)
				}
			})
		})
	}
}

func TestClaimIsUniqueAcrossEngines(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 50)
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "x")
		e1, e2 := b.engine(t), b.engine(t)
		f := Fire{SubscriptionID: "s1", At: time.Now().Add(time.Hour)}
		var wg sync.WaitGroup
		for _, e := range []*Engine{e1, e2, e1, e2} {
			wg.Go(func() { e.fire(context.Background(), f) })
		}
		wg.Wait()
		runs := b.runs(t, "s1")
		if len(runs) != 1 {
			t.Fatalf("%d runs for one instant", len(runs))
		}
		dels, _ := b.st.RunDeliveries(context.Background(), runs[0].ID)
		if len(dels) != 2 {
			t.Fatalf("%d deliveries, want 2", len(dels))
		}
	})
}

func TestMisfiresAfterDowntime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		cron     string
		downtime time.Duration
		want     []string // states of the runs, oldest first
		fired    time.Duration
		skipped  time.Duration
		reasons  []string // what the skipped runs' reasons say, oldest first
	}{
		{"within grace", "0 */5 * * * *", 12 * time.Minute, []string{"skipped", "queued"}, 10 * time.Minute, 5 * time.Minute,
			[]string{"within the grace window only the latest missed instant, 2000-01-01T00:10:00Z, runs"}},
		{"one missed", "0 */5 * * * *", 7 * time.Minute, []string{"queued"}, 5 * time.Minute, 0, nil},
		{"three missed", "0 */5 * * * *", 17 * time.Minute, []string{"skipped", "skipped", "queued"}, 15 * time.Minute, 5 * time.Minute,
			[]string{"only the latest missed instant, 2000-01-01T00:15:00Z, runs", "only the latest missed instant, 2000-01-01T00:15:00Z, runs"}},
		{"beyond grace", "0 0 * * * *", 150 * time.Minute, []string{"skipped", "skipped"}, 0, time.Hour,
			[]string{"past the grace window of 15m0s", "past the grace window of 15m0s"}},
		{"some beyond grace", "0 */10 * * * *", 35 * time.Minute, []string{"skipped", "skipped", "queued"}, 30 * time.Minute, 10 * time.Minute,
			[]string{"past the grace window of 15m0s", "only the latest missed instant"}},
		{"long downtime", "0 * * * * *", 5 * time.Hour, append(slices.Repeat([]string{"skipped"}, 100), "queued"), 5 * time.Hour, time.Minute,
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := newBundle(t)
				b.exec.set(m1, 50)
				created := time.Now()
				b.subscribe(t, "s1", tc.cron, "f:executeMetric('"+m1+"') > 10", "x")
				time.Sleep(tc.downtime) // the service is down
				e := b.engine(t)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error)
				go func() { done <- e.Run(ctx) }()
				synctest.Wait()
				cancel()
				must(t, <-done)
				runs := b.runs(t, "s1")
				var states []string
				for _, r := range runs {
					states = append(states, r.State)
				}
				if strings.Join(states, " ") != strings.Join(tc.want, " ") {
					t.Fatalf("runs = %v, want %v", states, tc.want)
				}
				if tc.fired > 0 && !runs[len(runs)-1].ScheduledAt.Equal(created.Add(tc.fired)) {
					t.Errorf("fired for %s, want %s", runs[len(runs)-1].ScheduledAt, created.Add(tc.fired))
				}
				if last := detailOf(t, runs[len(runs)-1]); tc.fired > 0 && last.Trigger != notify.TriggerCatchUp {
					t.Errorf("the run of the missed instant says trigger %q, want %q", last.Trigger, notify.TriggerCatchUp)
				}
				if tc.skipped > 0 && !runs[0].ScheduledAt.Equal(created.Add(tc.skipped)) {
					t.Errorf("skipped run at %s, want the first missed instant", runs[0].ScheduledAt)
				}
				for i, want := range tc.reasons {
					if !strings.Contains(string(runs[i].Detail), want) {
						t.Errorf("run %d (%s) says %s, want %q", i, runs[i].ScheduledAt, runs[i].Detail, want)
					}
				}
			})
		})
	}
}

func TestMetricExecutionsAreCoalesced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		for m := range 10 {
			b.exec.set(fmt.Sprintf("/svc/md/p1/obj/%d", 10+m), float64(m))
		}
		for i := range 1000 {
			uri := fmt.Sprintf("/svc/md/p1/obj/%d", 10+i%10)
			b.subscribe(t, fmt.Sprintf("s%d", i), "0 0 * * * *", "f:executeMetric('"+uri+"') >= 0", "v ${f:executeMetric('"+uri+"')}")
		}
		b.runFor(t, time.Hour)
		if n := b.exec.total(); n != 10 {
			t.Fatalf("%d metric executions for 1000 subscriptions on 10 metrics, want 10", n)
		}
		out, _ := b.st.Outbox(context.Background(), 5000)
		if len(out) != 2000 {
			t.Fatalf("%d outbox rows, want 2000", len(out))
		}
	})
}

// TestAttachmentsAreCoalesced: a hundred subscriptions attach one report at
// one instant, some as PDF, some as PDF and XLS: the report is executed once,
// each format (and the mail's HTML and chart) rendered once, and every run
// attaches the same files.
func TestAttachmentsAreCoalesced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		const report = "/svc/md/p1/obj/9"
		for i := range 100 {
			formats := []string{"PDF"}
			if i%2 == 1 {
				formats = []string{"PDF", "XLS"}
			}
			b.subscribe(t, fmt.Sprintf("s%d", i), "0 0 * * * *", "true", "daily", func(s *store.Subscription) {
				s.Def.Attachments = []store.ReportAttachment{{Report: report, Formats: formats}}
			})
		}
		b.runFor(t, time.Hour)
		if n := b.exec.reportCalls[report]; n != 1 {
			t.Errorf("%d executions of the report, want 1", n)
		}
		for _, f := range []string{"PDF", "XLS", "HTML", "PNG"} {
			if n := b.exec.exportCalls[report+"/result "+f]; n != 1 {
				t.Errorf("%d %s files, want 1", n, f)
			}
		}
		paths := map[string]bool{}
		for i := range 100 {
			runs := b.runs(t, fmt.Sprintf("s%d", i))
			if len(runs) != 1 || runs[0].State != store.RunQueued {
				t.Fatalf("s%d runs = %+v", i, runs)
			}
			for _, f := range detailOf(t, runs[0]).Files {
				paths[f.Path] = true
			}
		}
		if len(paths) != 3 { // PDF, XLS and the inline chart
			t.Errorf("runs attach %d distinct files, want 3: %v", len(paths), paths)
		}
	})
}

// TestAttachmentRendersRunAtOnce: the files a run attaches (each format, and
// the mail's HTML and chart) are rendered at once, so the run waits for the
// slowest render, not for their sum.
func TestAttachmentRendersRunAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.exportTime = time.Second
		b.subscribe(t, "s1", "0 0 * * * *", "true", "daily", func(s *store.Subscription) {
			s.Def.Attachments = []store.ReportAttachment{{Report: "/svc/md/p1/obj/9", Formats: []string{"PDF", "XLS"}}}
		})
		start := time.Now()
		b.engine(t).fire(context.Background(), Fire{SubscriptionID: "s1", At: start})
		if took := time.Since(start); took != time.Second {
			t.Errorf("the run took %s for four renders of 1s each, want 1s", took)
		}
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunQueued || len(detailOf(t, runs[0]).Files) != 3 {
			t.Fatalf("runs = %+v", runs)
		}
	})
}

// TestRepeatedFailuresMarkUnhealthyAndNotify fails evaluation four times: the
// roll-up of the third run marks the subscription unhealthy and tells the owner
// on every channel of theirs, of every kind.
func TestRepeatedFailuresMarkUnhealthyAndNotify(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.fail = errors.New("warehouse unavailable")
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "x")
		e := b.engine(t)
		start := time.Now()
		rate := func() {
			if _, err := e.domain.RateRuns(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 4 {
			e.fire(context.Background(), Fire{SubscriptionID: "s1", At: start.Add(time.Duration(i+1) * time.Hour)})
			rate()
		}
		runs := b.runs(t, "s1")
		var notices []int
		for i, r := range runs {
			if r.State != store.RunFailed || !strings.Contains(r.Error, "warehouse unavailable") || detailOf(t, r).Stage != stageEvaluate {
				t.Errorf("run %d = %+v", i, r)
			}
			dels, _ := b.st.RunDeliveries(context.Background(), r.ID)
			if len(dels) > 0 {
				notices = append(notices, i)
				if len(dels) != 2 || dels[0].Kind != "email" || dels[1].Kind != "sms" || !strings.Contains(dels[0].Payload.Subject, "failing") {
					t.Errorf("notice = %+v", dels)
				}
			}
		}
		if fmt.Sprint(notices) != "[2]" {
			t.Errorf("notices sent with runs %v, want only with the third", notices)
		}
		st, _ := b.st.State(context.Background(), "s1")
		if !st.Unhealthy || st.Failures != 4 {
			t.Errorf("state = %+v", st)
		}
		b.exec.fail = nil
		b.exec.set(m1, 1)
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: start.Add(10 * time.Hour)})
		rate()
		if st, _ := b.st.State(context.Background(), "s1"); st.Unhealthy || st.Failures != 0 {
			t.Errorf("after a good run state = %+v", st)
		}
	})
}

// TestCrashedRunsAreAdopted leaves a claimed run unfinished, as a process
// that died mid-run would, and starts an engine: once the run is older than
// the run timeout it is taken over and processed within the grace window, or
// recorded as failed past it. Its deliveries are handed over once.
func TestCrashedRunsAreAdopted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		later time.Duration
		want  string
	}{
		{"within grace", 4 * time.Minute, store.RunQueued},
		{"past grace", 20 * time.Minute, store.RunFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := newBundle(t)
				b.exec.set(m1, 50)
				b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "x")
				at := time.Now()
				must(t, b.st.ClaimRun(context.Background(), store.Run{ID: "orphan", SubscriptionID: "s1", ScheduledAt: at,
					State: store.RunRunning, Started: at}))
				time.Sleep(tc.later) // the process is gone
				e := b.engine(t)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error)
				go func() { done <- e.Run(ctx) }()
				synctest.Wait()
				cancel()
				must(t, <-done)
				runs := b.runs(t, "s1")
				if len(runs) != 1 || runs[0].ID != "orphan" || runs[0].State != tc.want {
					t.Fatalf("runs = %+v", runs)
				}
				dels, _ := b.st.RunDeliveries(context.Background(), "orphan")
				if want := map[string]int{store.RunQueued: 2, store.RunFailed: 0}[tc.want]; len(dels) != want {
					t.Errorf("%d deliveries, want %d", len(dels), want)
				}
			})
		})
	}
}

// TestPruneKeepsWhatPendingDeliveriesNeed: past the retention period, a run and
// the files it attaches stay while one of its deliveries is still to be
// sent, and go at the engine's next pruning once all are final. A folder of
// files as earlier versions kept them goes the same way.
func TestPruneKeepsWhatPendingDeliveriesNeed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newBundle(t)
		b.subscribe(t, "s1", "0 0 0 * * *", "true", "daily", func(s *store.Subscription) {
			s.Def.Attachments = []store.ReportAttachment{{Report: "/svc/md/p1/obj/9", Formats: []string{"PDF"}}}
		})
		b.runFor(t, 24*time.Hour)
		runs := b.runs(t, "s1")
		if len(runs) != 1 {
			t.Fatalf("runs = %+v", runs)
		}
		old := runs[0]
		// No later run uses the same files, which would keep them.
		sub, err := b.st.SubscriptionByID(ctx, "s1")
		must(t, err)
		sub.Enabled = false
		must(t, b.st.UpdateSubscription(ctx, sub))
		files := detailOf(t, old).Files
		if len(files) != 2 {
			t.Fatalf("the run attaches %+v", files)
		}
		// An earlier version's folder of the same instant, which a delivery of it references.
		legacy := filepath.Join(b.dir, "runs", "at"+strconv.FormatInt(old.ScheduledAt.Unix(), 10)+"-0123456789ab")
		must(t, os.MkdirAll(legacy, 0o700))
		must(t, os.WriteFile(filepath.Join(legacy, "report.pdf"), []byte("%PDF"), 0o600))
		kept := func() bool {
			t.Helper()
			for _, path := range []string{files[0].Path, files[1].Path, legacy} {
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					return false
				} else if err != nil {
					t.Fatal(err)
				}
			}
			return true
		}
		if !kept() {
			t.Fatal("the run's files are not there")
		}
		prune := func() { // an engine prunes as it starts
			t.Helper()
			b.runFor(t, 0, func(c *Config) { c.Retention = 36 * time.Hour })
		}

		time.Sleep(48 * time.Hour) // the run is now 48 hours old, beyond the retention of 36
		prune()
		ds, err := b.st.RunDeliveries(ctx, old.ID)
		if err != nil || len(ds) != 2 {
			t.Fatalf("past the retention, with its deliveries pending: %d deliveries, %v", len(ds), err)
		}
		if !kept() {
			t.Fatal("past the retention, with its deliveries pending, the run's files are gone")
		}

		_, err = b.st.MarkSentBatch(ctx, []store.SentMark{{ID: ds[0].ID}}, time.Now())
		must(t, err)
		prune()
		if !kept() {
			t.Fatal("one delivery still pending, the run's files are gone")
		}

		_, err = b.st.MarkFailed(ctx, ds[1].ID, "given up", time.Now())
		must(t, err)
		prune()
		if ds, err := b.st.RunDeliveries(ctx, old.ID); err != nil || len(ds) != 0 {
			t.Fatalf("every delivery final: %d deliveries left, %v", len(ds), err)
		}
		for _, path := range []string{files[0].Path, files[1].Path, legacy} {
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("every delivery final, %s: %v", path, err)
			}
		}
		for _, r := range b.runs(t, "s1") {
			if r.ID == old.ID {
				t.Fatal("every delivery final, the run is still there")
			}
		}
	})
}

// TestARefusingStoreHoldsTheFire: while the store refuses writes (a full
// disk), a fire is neither lost nor failed: its claim is tried again until
// the store takes it, and the run is handed over then.
func TestARefusingStoreHoldsTheFire(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 12)
		b.subscribe(t, "s1", "0 0 * * * *", "true", "Revenue is ${f:executeMetric('"+m1+"')}")
		raw, err := sql.Open("sqlite3", filepath.Join(b.dir, "herald.db"))
		must(t, err)
		defer raw.Close()
		_, err = raw.Exec(`CREATE TRIGGER full BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
		must(t, err)
		e := b.engine(t)
		at := time.Now().Add(time.Hour)
		fired := make(chan struct{})
		go func() { e.fire(context.Background(), Fire{SubscriptionID: "s1", Owner: b.owner, At: at}); close(fired) }()
		time.Sleep(time.Minute) // the bubble's: a minute of the store refusing
		synctest.Wait()
		select {
		case <-fired:
			t.Fatal("the fire ended while the store refused its claim")
		default:
		}
		_, err = raw.Exec(`DROP TRIGGER full`)
		must(t, err)
		<-fired
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunQueued || !runs[0].ScheduledAt.Equal(at) {
			t.Fatalf("runs = %+v, want the fire's, handed over", runs)
		}
	})
}

// TestRunWaitsForThePrefetch: Run returns only once the metric executions
// its prefetch started have returned, one that no run waits for too. One
// worker takes both runs of an instant; Run stops while it processes the
// first, so the second stays claimed for the next start, while the
// prefetch still executes its metric.
func TestRunWaitsForThePrefetch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		const m2 = "/svc/md/p1/obj/2"
		b.exec.set(m1, 0)
		b.exec.set(m2, 0)
		b.exec.took = map[string]time.Duration{m1: 10 * time.Second, m2: 10 * time.Minute}
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "v")
		b.subscribe(t, "s2", "0 0 * * * *", "f:executeMetric('"+m2+"') > 10", "v")
		e := b.engine(t, func(c *Config) { c.Workers = 1 })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- e.Run(ctx) }()
		time.Sleep(time.Hour + 5*time.Second) // the fire at 01:00, its executions under way
		cancel()
		must(t, <-done)
		b.exec.mu.Lock()
		n := b.exec.inFlight
		b.exec.mu.Unlock()
		if n != 0 {
			t.Errorf("%d metric executions outlived Run", n)
		}
		if runs := b.runs(t, "s1"); len(runs) != 1 || runs[0].State != store.RunNotTriggered {
			t.Errorf("runs of s1 %+v, want one not triggered", runs)
		}
		if runs := b.runs(t, "s2"); len(runs) != 1 || runs[0].State != store.RunRunning {
			t.Errorf("runs of s2 %+v, want one left claimed", runs)
		}
	})
}
