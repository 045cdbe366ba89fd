package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// member adds user uid to the bundle's project with roles, and gives them an
// e-mail channel, on which they are told of what fails.
func (b *testBundle) member(t *testing.T, uid string, roles ...string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	must(t, b.st.CreateUser(ctx, store.User{ID: uid, Domain: "default", Login: uid + "@example.com", PasswordHash: "x",
		Created: now, Updated: now}))
	res, err := b.st.ApplyMemberChanges(ctx, b.project, store.RoleAdmin,
		[]store.MemberChange{{UserID: uid, Status: store.MemberEnabled, Roles: roles, Add: true}}, now)
	must(t, errors.Join(append(res, err)...))
	must(t, b.st.CreateChannel(ctx, store.Channel{ID: "mail-" + uid, Owner: uid, Kind: "email", Title: "mail",
		Config: []byte(`{"to":"` + uid + `@example.com"}`), Created: now, Updated: now}, store.Quota{}))
}

// change applies a membership change of user uid.
func (b *testBundle) change(t *testing.T, c store.MemberChange) {
	t.Helper()
	res, err := b.st.ApplyMemberChanges(context.Background(), b.project, store.RoleAdmin, []store.MemberChange{c}, time.Now())
	must(t, errors.Join(append(res, err)...))
}

// TestRefusedFireFailsAndTellsOnce: a fire whose owner the access decision
// refuses runs nothing as the owner, fails with the decision's reason, counts
// toward health and tells the owner at once, and only once however often
// it fires refused; once the owner may again, it runs.
func TestRefusedFireFailsAndTellsOnce(t *testing.T) {
	t.Parallel()
	const report = "/svc/md/p1/obj/9"
	cases := []struct {
		name   string
		attach bool
		change func(t *testing.T, b *testBundle)
		reason string
		undo   func(t *testing.T, b *testBundle)
	}{
		{"owner disabled", false, func(t *testing.T, b *testBundle) {
			b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberDisabled})
		}, "owner is not a member of the project", func(t *testing.T, b *testBundle) {
			b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberEnabled})
		}},
		{"owner's roles taken", false, func(t *testing.T, b *testBundle) {
			b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberEnabled, Roles: []string{}})
		}, "owner may not execute reports", func(t *testing.T, b *testBundle) {
			b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberEnabled, Roles: []string{notify.RoleViewer}})
		}},
		{"owner may only see dashboards", true, func(t *testing.T, b *testBundle) {
			b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberEnabled, Roles: []string{notify.RoleDashboard}})
		}, "owner may not export reports", func(t *testing.T, b *testBundle) {
			b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberEnabled, Roles: []string{notify.RoleExplorer}})
		}},
		{"report deleted", true, func(t *testing.T, b *testBundle) {
			must(t, b.st.DeleteObject(context.Background(), b.project, 9))
		}, "report 9 is not readable by the owner", nil},
		{"metric deleted", false, func(t *testing.T, b *testBundle) {
			must(t, b.st.DeleteObject(context.Background(), b.project, 1))
		}, "metric 1 is not readable by the owner", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				b := newBundle(t)
				b.exec.set(m1, 50)
				b.member(t, "u2", notify.RoleViewer)
				b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "x", func(s *store.Subscription) {
					s.Owner, s.Channels = "u2", []string{"mail-u2"}
					if tc.attach {
						s.Def.Attachments = []store.ReportAttachment{{Report: report, Formats: []string{"PDF"}}}
					}
				})
				e := b.engine(t)
				start := time.Now()
				fire := func(i int) store.Run {
					t.Helper()
					e.fire(ctx, Fire{SubscriptionID: "s1", At: start.Add(time.Duration(i) * time.Hour)})
					if _, err := e.domain.RateRuns(ctx); err != nil {
						t.Fatal(err)
					}
					runs := b.runs(t, "s1")
					return runs[len(runs)-1]
				}
				if run := fire(1); run.State != store.RunQueued {
					t.Fatalf("before the change, run = %+v", run)
				}
				owner := Principal{User: "u2", Project: b.project}
				before := b.exec.executions(owner)
				tc.change(t, b)

				for i := 2; i <= 3; i++ {
					run := fire(i)
					want := notify.StageAuthorize + ": " + tc.reason
					if run.State != store.RunFailed || run.Error != want || detailOf(t, run).Stage != notify.StageAuthorize {
						t.Fatalf("fire %d: run %s %q (stage %s), want failed %q", i, run.State, run.Error, detailOf(t, run).Stage, want)
					}
					dels, err := b.st.RunDeliveries(ctx, run.ID)
					must(t, err)
					switch {
					case i == 2 && (len(dels) != 1 || dels[0].ChannelID != "mail-u2"):
						t.Errorf("the first refused fire tells the owner on their channel: %+v", dels)
					case i == 2:
						if want := "cannot run"; !strings.Contains(dels[0].Payload.Subject, want) || !strings.Contains(dels[0].Payload.Text, tc.reason) {
							t.Errorf("notice %q: %q, want %q and the reason", dels[0].Payload.Subject, dels[0].Payload.Text, want)
						}
					case len(dels) != 0:
						t.Errorf("fire %d, refused again, tells the owner again: %+v", i, dels)
					}
				}
				if n := b.exec.executions(owner) - before; n != 0 {
					t.Errorf("refused fires made %d executions as the owner", n)
				}
				st, err := b.st.State(ctx, "s1")
				must(t, err)
				if !st.Unhealthy || st.Failures != 2 {
					t.Errorf("state after two refused fires = %+v, want unhealthy with 2 failures", st)
				}
				if tc.undo == nil {
					return
				}
				tc.undo(t, b)
				if run := fire(4); run.State != store.RunQueued {
					t.Errorf("once the owner may again, run = %s %q", run.State, run.Error)
				}
			})
		})
	}
}

// TestRunsAsTheOwner: every execution and export of a run is made as the
// subscription's owner, in its project.
func TestRunsAsTheOwner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 50)
		b.member(t, "u2", notify.RoleViewer)
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "x", func(s *store.Subscription) {
			s.Owner, s.Channels = "u2", []string{"mail-u2"}
			s.Def.Attachments = []store.ReportAttachment{{Report: "/svc/md/p1/obj/9", Formats: []string{"PDF"}}}
		})
		b.engine(t).fire(context.Background(), Fire{SubscriptionID: "s1", At: time.Now()})
		if runs := b.runs(t, "s1"); len(runs) != 1 || runs[0].State != store.RunQueued {
			t.Fatalf("runs = %+v", runs)
		}
		b.exec.mu.Lock()
		defer b.exec.mu.Unlock()
		// One metric execution, one report execution and three files: the PDF, the HTML and the chart.
		if want := map[Principal]int{{User: "u2", Project: b.project}: 5}; fmt.Sprint(b.exec.principals) != fmt.Sprint(want) {
			t.Errorf("calls by principal = %v, want %v", b.exec.principals, want)
		}
	})
}

// TestRefusedBurstExecutesNothing: in the pipeline, which starts the
// metrics a batch of claimed runs needs ahead of them, a run whose owner the
// decision refuses has nothing executed as that owner either.
func TestRefusedBurstExecutesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 50)
		b.member(t, "u2", notify.RoleViewer)
		for i := range 10 {
			b.subscribe(t, fmt.Sprintf("s%d", i), "0 0 * * * *", "f:executeMetric('"+m1+"') > 10", "x", func(s *store.Subscription) {
				s.Owner, s.Channels = "u2", []string{"mail-u2"}
			})
		}
		b.change(t, store.MemberChange{UserID: "u2", Status: store.MemberDisabled})
		b.runFor(t, time.Hour)
		for i := range 10 {
			if runs := b.runs(t, fmt.Sprintf("s%d", i)); len(runs) != 1 || runs[0].State != store.RunFailed {
				t.Fatalf("s%d runs = %+v", i, runs)
			}
		}
		if n := b.exec.executions(Principal{User: "u2", Project: b.project}); n != 0 {
			t.Errorf("%d executions as a refused owner", n)
		}
	})
}
