// Command fairness measures how long one owner's alert waits behind another
// owner's burst. Owner A (the demo's admin) has -burst subscriptions that fire
// at one instant and mail a slow SMTP relay (each message answered -delay
// after it was read); owner B, another member of the project, has an alert
// due at the same instant and one due -later after it. Each run times, from
// each of B's instants, until the relay accepted B's mail, and A's last mail.
//
// The baseline is B alone, in the same run: the same Herald, relay and
// alerts with A's burst left out. The verdict is B's wait beside the burst,
// against the 1 s target, with its ratio to the baseline.
//
//	go run ./bench/fairness [-burst 10000] [-delay 20ms] [-later 3s] [-runs 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/textproto"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/store"
)

// instant is when A's burst and B's first alert fire: hourly at minute 0.
var instant = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// options are what one run sets up.
type options struct {
	burst int
	delay time.Duration // the relay's answer to each message
	later time.Duration // B's second alert, after the instant
	lead  time.Duration // Herald's second start, before the instant
}

func main() {
	var o options
	flag.IntVar(&o.burst, "burst", 10_000, "owner A's subscriptions firing at the instant")
	flag.DurationVar(&o.delay, "delay", 20*time.Millisecond, "the relay's time to accept one message")
	flag.DurationVar(&o.later, "later", 3*time.Second, "owner B's second alert, after the instant (whole seconds)")
	flag.DurationVar(&o.lead, "lead", 5*time.Second, "how long before the instant Herald's second start is")
	runs := flag.Int("runs", 1, "runs, each with the baseline and the burst on fresh data folders")
	flag.Parse()
	benchapp.Header(os.Stdout, "fairness")
	ctx := context.Background()
	fmt.Printf("owner A: %d mails at one instant to a relay that takes %s a mail; owner B: one alert at the instant, one %s after\n",
		o.burst, o.delay, o.later)
	fmt.Printf("%-4s %-9s %12s %12s %12s\n", "run", "A's burst", "B's at T", "B's at T+"+o.later.String(), "A's last")
	for i := range *runs {
		alone := measure(ctx, options{delay: o.delay, later: o.later, lead: o.lead})
		beside := measure(ctx, o)
		fmt.Printf("%-4d %-9s %12s %12s %12s\n", i+1, "none", round(alone.now), round(alone.later), "")
		fmt.Printf("%-4d %-9d %12s %12s %12s\n", i+1, o.burst, round(beside.now), round(beside.later), round(beside.lastA))
		worst := max(beside.now, beside.later)
		verdict := "met"
		if worst > time.Second {
			verdict = "NOT met"
		}
		fmt.Printf("     B's longest wait beside the burst %s (%.1f× alone): ≤ 1 s %s\n", round(worst),
			float64(worst)/float64(max(alone.now, alone.later)), verdict)
	}
}

func round(d time.Duration) string { return d.Round(time.Millisecond).String() }

// timings are what one measurement saw, each from its instant.
type timings struct {
	now, later time.Duration // B's alerts accepted
	lastA      time.Duration // A's last mail accepted
}

// measure sets up a fresh Herald, fires the burst and B's alerts and times
// them at the relay.
func measure(ctx context.Context, o options) timings {
	dir, err := os.MkdirTemp("", "herald-fairness")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var mu sync.Mutex
	accepted := map[string]time.Time{} // B's subjects → when accepted
	lastA := time.Time{}
	sink, err := benchapp.NewSink(o.burst+2, benchapp.WithReplyDelay(o.delay),
		benchapp.WithSeen(func(h textproto.MIMEHeader, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			if subj := h.Get("Subject"); strings.HasPrefix(subj, "B ") {
				accepted[subj] = at
			} else {
				lastA = at
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	defer sink.Close()
	clock := &benchapp.ShiftedClock{}
	clock.Set(instant.Add(-time.Hour))
	configure := func(c *app.Config) {
		c.Log.Level = "error"
		sec := c.Channels["smtp"].(*email.Settings)
		sec.Host, sec.Port, sec.TLSPolicy = "127.0.0.1", sink.Port(), "none"
	}
	h, stop, err := benchapp.Start(ctx, dir, configure, app.Options{Clock: clock, Demo: true})
	if err != nil {
		log.Fatal(err)
	}
	setUp(ctx, h, o, clock.Now())
	stop()

	clock.Set(instant.Add(-o.lead))
	_, stop, err = benchapp.Start(ctx, dir, configure, app.Options{Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	select {
	case <-sink.Done():
	case <-time.After(5 * time.Minute):
		total, _ := sink.Counts()
		log.Fatalf("timed out: %d of %d mails", total, o.burst+2)
	}
	if total, distinct := sink.Counts(); total != distinct {
		log.Fatalf("%d mails, %d distinct Message-IDs", total, distinct)
	}
	mu.Lock()
	defer mu.Unlock()
	t := timings{now: accepted["B at the instant"].Sub(clock.Real(instant)),
		later: accepted["B later"].Sub(clock.Real(instant.Add(o.later)))}
	if !lastA.IsZero() {
		t.lastA = lastA.Sub(clock.Real(instant))
	}
	return t
}

// setUp makes owner B a member of the demo project, stores A's burst
// (mailing A's demo channel) and B's two alerts (mailing a channel of B's),
// and deletes the demo's own subscription.
func setUp(ctx context.Context, h *benchapp.Herald, o options, now time.Time) {
	st := h.App.Store()
	demo, err := st.EnabledSubscriptions(ctx)
	if err != nil || len(demo) == 0 {
		log.Fatalf("demo subscription: %v", err)
	}
	pid := demo[0].ProjectID
	for _, s := range demo {
		if err := st.DeleteSubscription(ctx, s.ID); err != nil {
			log.Fatal(err)
		}
	}
	a := strings.TrimPrefix(h.Profile, "/svc/account/profile/")
	b := addMember(ctx, h.Client, "/svc/projects/"+pid, "b@example.com")
	chans, err := st.Channels(ctx, a)
	if err != nil || len(chans) == 0 {
		log.Fatalf("A's channel: %v", err)
	}
	bChannel := store.Channel{ID: "bmail", Owner: b, Kind: "email", Title: "B's mail",
		Config: []byte(`{"to":"b@example.com"}`), Created: now, Updated: now}
	if err := st.CreateChannel(ctx, bChannel, store.Quota{}); err != nil {
		log.Fatal(err)
	}
	add := func(id, owner, channel, title, cron string) {
		sub := store.Subscription{ID: id, ProjectID: pid, Owner: owner, Title: title, Enabled: true,
			Channels: []string{channel}, Created: now, Updated: now,
			Def: store.SubscriptionDef{Triggers: []store.Trigger{{Cron: cron, Timezone: "UTC"}},
				Condition: "true", Message: title, FireMode: store.FireAlways}}
		if err := st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
			log.Fatal(err)
		}
	}
	for i := range o.burst {
		add(fmt.Sprintf("burst%06d", i), a, chans[0].ID, "A's report", "0 0 * * * *")
	}
	add("bnow", b, bChannel.ID, "B at the instant", "0 0 * * * *")
	add("blater", b, bChannel.ID, "B later", fmt.Sprintf("%d 0 * * * *", int(o.later.Seconds())))
}

// addMember creates a user and makes it an editor of the project, and
// returns its id.
func addMember(ctx context.Context, c *client.Client, project, login string) string {
	profile, err := c.CreateUser(ctx, "default", client.NewUser{Login: login, Password: benchapp.AdminPassword,
		FirstName: "B", LastName: "Owner"})
	if err != nil {
		log.Fatalf("create user: %v", err)
	}
	role, err := c.RoleURI(ctx, project, "editorRole")
	if err != nil {
		log.Fatalf("editor role: %v", err)
	}
	if _, err := c.AddProjectUser(ctx, project, profile, role); err != nil {
		log.Fatalf("add member: %v", err)
	}
	return strings.TrimPrefix(profile, "/svc/account/profile/")
}
