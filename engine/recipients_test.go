package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

const report9 = "/svc/md/p1/obj/9"

// audienceEngine is an engine over the bundle whose domain knows the e-mail
// kind, which reaches recipients.
func (b *testBundle) audienceEngine(t *testing.T, opts ...func(*notify.Config)) *Engine {
	t.Helper()
	kinds := channels.MustRegistry(email.Descriptor)
	nc := notify.DefaultConfig()
	for _, o := range opts {
		o(&nc)
	}
	cfg := Config{FilesDir: filepath.Join(b.dir, "runs"), Workers: 4,
		Domain: notify.New(b.st, nc, notify.Options{Domain: "default", Kinds: kinds,
			Settings: map[channels.Kind]channels.Settings{email.Kind: email.DefaultSettings()}})}
	e, err := New(b.st, b.exec, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	must(t, err)
	return e
}

// members adds n enabled viewers m0..m{n-1} to the project, m<i> with the
// user filter of slice i%slices ("region <k>").
func (b *testBundle) members(t *testing.T, n, slices int) []string {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("m%d", i)
		must(t, b.st.CreateUser(ctx, store.User{ID: id, Domain: "default", Login: id + "@example.com", PasswordHash: "x",
			Created: now, Updated: now}))
		res, err := b.st.ApplyMemberChanges(ctx, b.project, store.RoleAdmin,
			[]store.MemberChange{{UserID: id, Status: store.MemberEnabled, Roles: []string{notify.RoleViewer}, Add: true}}, now)
		must(t, err)
		must(t, res[0])
		b.exec.filters[id] = NewFilters(fmt.Sprintf("region %d", i%slices))
		ids = append(ids, id)
	}
	return ids
}

// TestRecipientsShareOneExecutionPerSlice: 30 members over 3 slices get the
// subscription as themselves: one execution of the metric, one of the
// report and one file per format per slice, and one delivery each, its
// slice's; the condition decides per slice; a member of a slice whose
// condition does not hold gets nothing.
func TestRecipientsShareOneExecutionPerSlice(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		ids := b.members(t, 30, 3)
		b.exec.set(m1, 0)
		for k, v := range []float64{5, 50, 500} {
			b.exec.sliced[m1+" "+fmt.Sprintf("region %d", k)] = v
		}
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') gt 10", "Sales ${f:executeMetric('"+m1+"')}",
			func(s *store.Subscription) {
				s.Channels = nil
				s.Def.Recipients = &store.Recipients{Users: ids, Via: []store.Via{{Kind: "email"}}}
				s.Def.Attachments = []store.ReportAttachment{{Report: report9, Formats: []string{"PDF", "XLS"}}}
			})
		e := b.audienceEngine(t)
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: time.Now().Add(time.Hour)})
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunQueued {
			t.Fatalf("runs = %+v", runs)
		}
		if n := b.exec.calls[m1]; n != 3 {
			t.Errorf("%d executions of the metric, want one per slice: 3", n)
		}
		if n := b.exec.reportCalls[report9]; n != 2 {
			t.Errorf("%d executions of the report, want one per slice that sends: 2", n)
		}
		for _, k := range []int{1, 2} {
			for _, f := range []string{"PDF", "XLS", "HTML"} {
				if n := b.exec.exportCalls[fmt.Sprintf("%s/result?region %d %s", report9, k, f)]; n != 1 {
					t.Errorf("slice %d: %d %s files, want 1", k, n, f)
				}
			}
		}
		dels, err := b.st.RunDeliveries(context.Background(), runs[0].ID)
		must(t, err)
		if len(dels) != 20 {
			t.Fatalf("%d deliveries, want one per member of the two slices over 10: 20", len(dels))
		}
		for _, dl := range dels {
			k := 0
			fmt.Sscanf(dl.Recipient, "m%d", &k)
			want := map[int]string{1: "Sales 50.00", 2: "Sales 500.00"}[k%3]
			if dl.Address != dl.Recipient+"@example.com" || dl.ChannelID != "" || dl.Payload.Text != want ||
				dl.Payload.HTMLFile == "" || string(dl.Config) != `{"to":"`+dl.Address+`"}` {
				t.Errorf("delivery %+v, want %q to its member", dl, want)
			}
		}
		d := detailOf(t, runs[0])
		if a := d.Audience; a == nil || a.Recipients != 20 || a.Slices != 3 || a.NotTriggered != 10 || d.Skipped != 0 {
			t.Errorf("audience %+v, skipped %d", d.Audience, d.Skipped)
		}
	})
}

// TestBurstSkipsBadRowsAndCoalesces: a burst of 300 rows over 10 elements
// and 100 addresses (three rows each, of one element, one of them without an
// address and one with a malformed one) executes the metric once per
// element, skips and counts the bad rows, and sends each good address its
// own slice: the owner's restricted to its element.
func TestBurstSkipsBadRowsAndCoalesces(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 1)
		b.exec.filters[b.owner] = NewFilters("owner's region")
		const by = "/svc/md/p1/obj/20"
		for i := range 300 {
			b.exec.burst = append(b.exec.burst, BurstRow{Address: fmt.Sprintf("a%d@example.com", i%100),
				Element: fmt.Sprintf("%s/elements?id=%d", by, i%100%10)})
		}
		for k := range 10 { // each element's slice has a value of its own: 100+k
			only := fmt.Sprintf("[%s] IN ([%s/elements?id=%d])", by, by, k)
			b.exec.sliced[m1+" "+NewFilters("owner's region", only).String()] = float64(100 + k)
		}
		b.exec.burst[7].Address = "" // a7's other rows still count for it
		b.exec.burst[100].Address = "not an address"
		b.subscribe(t, "s1", "0 0 * * * *", "true", "Sales ${f:executeMetric('"+m1+"')}", func(s *store.Subscription) {
			s.Channels = nil
			s.Def.Burst = &store.Burst{Report: report9, Address: "/svc/md/p1/obj/19", By: by, Via: store.Via{Kind: "email"}}
		})
		e := b.audienceEngine(t)
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: time.Now().Add(time.Hour)})
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunQueued {
			t.Fatalf("runs = %+v", runs)
		}
		d := detailOf(t, runs[0])
		if d.Skipped != 2 || d.Audience.Rows != 300 || d.Audience.Recipients != 100 || d.Audience.Slices != 10 {
			t.Errorf("skipped %d, audience %+v", d.Skipped, d.Audience)
		}
		if n := b.exec.calls[m1]; n != 10 {
			t.Errorf("%d executions of the metric, want one per element: 10", n)
		}
		dels, err := b.st.RunDeliveries(context.Background(), runs[0].ID)
		must(t, err)
		if len(dels) != 100 {
			t.Errorf("%d deliveries, want one per good address: 100", len(dels))
		}
		for _, dl := range dels {
			var n int
			fmt.Sscanf(dl.Address, "a%d@", &n)
			want := fmt.Sprintf("Sales %d.00", 100+n%10)
			if dl.Payload.Text != want || !strings.Contains(dl.Payload.Source.Subscription, "s1") || dl.Recipient != "" ||
				len(dl.Payload.Links.Files) != 0 {
				t.Errorf("delivery %+v, want %q (its element %s/elements?id=%d)", dl, want, by, n%10)
			}
		}
		for p := range b.exec.principals {
			if p.User != b.owner {
				t.Errorf("a burst executed as %s, want its owner", p.User)
			}
			if f := p.Filters.String(); !strings.Contains(f, "owner's region") {
				t.Errorf("a burst's slice %q lost the owner's filters", f)
			}
		}
	})
}

// TestBurstStopsAtMaxBurstRecipients: a burst sends to at most
// subscriptions.maxBurstRecipients distinct addresses, the first in the
// report's order; the rows of further ones are skipped and counted, saying
// why, and the run goes on.
func TestBurstStopsAtMaxBurstRecipients(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 1)
		const by = "/svc/md/p1/obj/20"
		for i := range 100 {
			b.exec.burst = append(b.exec.burst, BurstRow{Address: fmt.Sprintf("a%d@example.com", i),
				Element: fmt.Sprintf("%s/elements?id=%d", by, i%5)})
		}
		b.exec.burst = append(b.exec.burst, BurstRow{Address: "A3@example.com", Element: by + "/elements?id=4"}) // a3 again
		b.subscribe(t, "s1", "0 0 * * * *", "true", "Sales ${f:executeMetric('"+m1+"')}", func(s *store.Subscription) {
			s.Channels = nil
			s.Def.Burst = &store.Burst{Report: report9, Address: "/svc/md/p1/obj/19", By: by, Via: store.Via{Kind: "email"}}
		})
		e := b.audienceEngine(t, func(c *notify.Config) { c.MaxBurstRecipients = 30 })
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: time.Now().Add(time.Hour)})
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunQueued {
			t.Fatalf("runs = %+v", runs)
		}
		d := detailOf(t, runs[0])
		if d.Skipped != 70 || d.Audience.Recipients != 30 || d.Audience.Rows != 101 {
			t.Errorf("skipped %d, audience %+v", d.Skipped, d.Audience)
		}
		if len(d.Audience.Skips) == 0 || d.Audience.Skips[0].Address != "a30@example.com" ||
			!strings.Contains(d.Audience.Skips[0].Reason, "subscriptions.maxBurstRecipients (30 addresses)") {
			t.Errorf("the first skip: %+v", d.Audience.Skips)
		}
		dels, err := b.st.RunDeliveries(context.Background(), runs[0].ID)
		must(t, err)
		if len(dels) != 30 {
			t.Errorf("%d deliveries, want 30", len(dels))
		}
	})
}

// TestRecipientsDownloadTheirOwnFiles: in a run whose slices attach files of
// their own, each delivery's download links lead to its own slice's files,
// for a recipient and for the owner on their own channel alike.
func TestRecipientsDownloadTheirOwnFiles(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		ids := b.members(t, 4, 2)
		b.exec.set(m1, 1)
		b.exec.filters[b.owner] = NewFilters("the owner's")
		b.subscribe(t, "s1", "0 0 * * * *", "true", "Sales", func(s *store.Subscription) {
			s.Channels = b.channels[:1]
			s.Def.Recipients = &store.Recipients{Users: ids, Via: []store.Via{{Kind: "email"}}}
			s.Def.Attachments = []store.ReportAttachment{{Report: report9, Formats: []string{"CSV"}}}
		})
		kinds := channels.MustRegistry(email.Descriptor)
		domain := notify.New(b.st, notify.DefaultConfig(), notify.Options{Domain: "default", Kinds: kinds,
			Settings:  map[channels.Kind]channels.Settings{email.Kind: email.DefaultSettings()},
			PublicURL: "https://herald.test", LinkKey: []byte("0123456789abcdef0123456789abcdef")})
		e, err := New(b.st, b.exec, Config{FilesDir: filepath.Join(b.dir, "runs"), Workers: 4, Domain: domain},
			slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		must(t, err)
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: time.Now().Add(time.Hour)})
		runs := b.runs(t, "s1")
		dels, err := b.st.RunDeliveries(context.Background(), runs[0].ID)
		must(t, err)
		if len(dels) != 5 || len(detailOf(t, runs[0]).Files) != 6 {
			t.Fatalf("%d deliveries, %d files of the run; want 5 and 6 (a CSV and a chart per slice)", len(dels), len(detailOf(t, runs[0]).Files))
		}
		for _, dl := range dels {
			if len(dl.Payload.Links.Files) != 1 {
				t.Fatalf("delivery to %q has links %+v", dl.Address, dl.Payload.Links)
			}
			token := strings.TrimPrefix(dl.Payload.Links.Files[0].URL, "https://herald.test"+notify.FilePath)
			f, err := domain.SharedFile(context.Background(), token)
			if err != nil || f.Path != dl.Payload.Attachments[0].Path {
				t.Errorf("the link of the delivery to %q (channel %q) downloads %q, %v; want its own %q", dl.Address, dl.ChannelID,
					f.Path, err, dl.Payload.Attachments[0].Path)
			}
		}
	})
}
