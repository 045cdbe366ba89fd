package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/worker"
)

const (
	from        = "Herald <herald@example.com>"
	fromDomain  = "example.com"
	subject     = "Daily revenue"
	text        = "Revenue rose 3% to 2,100 yesterday; EMEA led with 1,200.\n"
	perRun      = 10 // deliveries per run (channels of the subscription)
	waitTimeout = 5 * time.Minute
)

// result is one side of one round.
type result struct {
	n       int
	elapsed time.Duration
	cpu     time.Duration // process CPU time used meanwhile
}

func (r result) perSecond() float64 { return float64(r.n) / r.elapsed.Seconds() }

func (r result) cpuPerMail() time.Duration { return r.cpu / time.Duration(r.n) }

// mailHTML is the HTML part the pipeline sends for the bench's message (the
// e-mail kind shows a text message as HTML too), taken from a message the
// kind writes, so the bare loop sends the same bytes.
func mailHTML(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "herald-bench-html")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	o := email.NewOutbox(dir, from, nil)
	m := channels.Message{DeliveryID: "html", Subject: subject, Text: text,
		Channel: channels.Channel{ID: "ch0", Kind: email.Kind, Config: []byte(`{"to":"team0@example.com"}`)}}
	if _, err := o.Send(ctx, m); err != nil {
		return "", err
	}
	raw, err := os.ReadFile(o.Path(m.DeliveryID))
	if err != nil {
		return "", err
	}
	e, err := channeltest.ParseEmail(raw)
	if err != nil || e.HTML == "" {
		return "", fmt.Errorf("the e-mail kind's HTML part: %v", err)
	}
	return e.HTML, nil
}

// bare sends n messages straight from go-mail over conc connections, each
// goroutine composing its messages (the text and the HTML part the pipeline
// sends) and sending them on its own connection. The bare loop uses go-mail's
// defaults, a NOOP before each mail and a NOOP and RSET after it; the lean
// one leaves those out, as the e-mail kind does.
func bare(ctx context.Context, n, conc int, lean bool) (result, error) {
	html, s, err := htmlAndSink(ctx, n)
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	opts := []mail.Option{mail.WithPort(s.Port()), mail.WithTLSPolicy(mail.NoTLS), mail.WithTimeout(30 * time.Second)}
	if lean {
		opts = append(opts, mail.WithoutNoop(), mail.WithoutRset())
	}
	client, err := mail.NewClient("127.0.0.1", opts...)
	if err != nil {
		return result{}, err
	}
	var next atomic.Int64
	errs := make([]error, conc)
	start, cpu := time.Now(), benchapp.CPUTime()
	var wg sync.WaitGroup
	for g := range conc {
		wg.Go(func() {
			c, err := client.DialToSMTPClientWithContext(ctx)
			if err != nil {
				errs[g] = err
				return
			}
			defer client.CloseWithSMTPClient(c)
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				m, err := bareMail(fmt.Sprintf("bare-%d", i), fmt.Sprintf("team%d@example.com", i%perRun), html)
				if err != nil {
					errs[g] = err
					return
				}
				if err := client.SendWithSMTPClient(c, m); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), benchapp.CPUTime()-cpu
	if err := errors.Join(errs...); err != nil {
		return result{}, fmt.Errorf("bare loop: %w", err)
	}
	if err := eachOnce("bare loop", s, n); err != nil {
		return result{}, err
	}
	return result{n: n, elapsed: elapsed, cpu: cpu}, nil
}

// eachOnce fails a side whose n mails did not reach s once each.
func eachOnce(side string, s *benchapp.Sink, n int) error {
	if total, distinct := s.Counts(); total != n || distinct != n {
		return fmt.Errorf("%s: %d messages, %d distinct, want %d", side, total, distinct, n)
	}
	return nil
}

// htmlAndSink returns the HTML part the sides send and an SMTP server, latency
// away, that awaits n mails.
func htmlAndSink(ctx context.Context, n int) (string, *benchapp.Sink, error) {
	html, err := mailHTML(ctx)
	if err != nil {
		return "", nil, err
	}
	s, err := benchapp.NewSink(n, benchapp.WithLatency(latency))
	return html, s, err
}

// bareMail composes the bare loop's mail id to address to, with the text
// and the HTML part the pipeline sends.
func bareMail(id, to, html string) (*mail.Msg, error) {
	m := mail.NewMsg()
	if err := errors.Join(m.From(from), m.To(to)); err != nil {
		return nil, err
	}
	m.Subject(subject)
	m.SetMessageIDWithValue(id + "@" + fromDomain)
	m.SetDate()
	m.SetUserAgent("Herald")
	m.SetBodyString(mail.TypeTextPlain, text)
	m.AddAlternativeString(mail.TypeTextHTML, html)
	return m, nil
}

// pipeline hands n deliveries over to the outbox, then starts the worker on
// an embedded JetStream and times them until the SMTP server accepted them
// all; ledgerDone is when, counted from the same start, the last run was
// rolled up.
func pipeline(ctx context.Context, dir string, n, conc int) (accepted result, ledgerDone time.Duration, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return result{}, 0, err
	}
	s, err := benchapp.NewSink(n, benchapp.WithLatency(latency))
	if err != nil {
		return result{}, 0, err
	}
	defer s.Close()
	st, runs, err := handOver(ctx, filepath.Join(dir, "herald.db"), n)
	if err != nil {
		return result{}, 0, err
	}
	defer st.Close()
	nc, err := worker.StartEmbedded(filepath.Join(dir, "nats"), worker.EmbeddedConfig{})
	if err != nil {
		return result{}, 0, err
	}
	defer nc.Close()
	// The sender as Herald makes it from its smtp section.
	set := email.DefaultSettings()
	set.Host, set.Port, set.TLSPolicy, set.From, set.Concurrency = "127.0.0.1", s.Port(), "none", from, conc
	sender, closeSender, err := email.Descriptor.NewSender(set, channels.Env{SendTimeout: 30 * time.Second})
	if err != nil {
		return result{}, 0, err
	}
	defer closeSender()
	cfg := worker.Config{Kinds: map[channels.Kind]worker.KindConfig{email.Kind: {Concurrency: set.Concurrency}}}
	files, err := worker.OpenFiles(ctx, nc.JetStream(), worker.FilesConfig{Scratch: filepath.Join(dir, "scratch")})
	if err != nil {
		return result{}, 0, err
	}
	relay, err := worker.NewRelay(st, nc.JetStream(), files, nil, nil, cfg, worker.Options{})
	if err != nil {
		return result{}, 0, err
	}
	// The ledger tells the relay what became final, as Herald wires them, so
	// that the owner's room in flight (delivery.maxInFlightPerOwner) frees.
	w, err := worker.New(nc.JetStream(), worker.NewSQLiteLedger(st, nil, func(ids []string) { relay.Settled(ids...) }), files, nil, []channels.Sender{sender}, cfg, worker.Options{})
	if err != nil {
		return result{}, 0, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return result{}, 0, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return result{}, 0, err
		}
		defer pprof.StopCPUProfile()
	}
	start, cpu := time.Now(), benchapp.CPUTime()
	done := make(chan error, 1)
	go func() {
		relayDone := make(chan error, 1)
		go func() { relayDone <- relay.Run(runCtx) }()
		err := w.Run(runCtx)
		done <- errors.Join(err, <-relayDone)
	}()
	select {
	case <-s.Done():
	case err := <-done:
		return result{}, 0, fmt.Errorf("worker stopped: %w", err)
	case <-time.After(waitTimeout):
		total, _ := s.Counts()
		return result{}, 0, fmt.Errorf("pipeline: %d of %d accepted in %v", total, n, waitTimeout)
	}
	accepted = result{n: n, elapsed: time.Since(start), cpu: benchapp.CPUTime() - cpu}
	if err := awaitLedger(ctx, st, runs); err != nil {
		return result{}, 0, err
	}
	ledgerDone = time.Since(start)
	stop()
	if err := <-done; err != nil {
		return result{}, 0, err
	}
	if err := eachOnce("pipeline", s, n); err != nil {
		return result{}, 0, err
	}
	return accepted, ledgerDone, nil
}

// handOver opens a store with one subscription of perRun e-mail channels
// and enqueues n/perRun runs of it, which leaves n rows in the outbox.
func handOver(ctx context.Context, path string, n int) (*store.Store, []string, error) {
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fail := func(err error) (*store.Store, []string, error) {
		st.Close()
		return nil, nil, fmt.Errorf("hand over: %w", err)
	}
	if err := st.EnsureDomain(ctx, "default", t0); err != nil {
		return fail(err)
	}
	u := store.User{ID: "u1", Domain: "default", Login: "bench@example.com", PasswordHash: "x", Created: t0, Updated: t0}
	if err := st.CreateUser(ctx, u); err != nil {
		return fail(err)
	}
	p := store.Project{ID: "p1", Title: "Bench", State: store.ProjectEnabled, Author: "u1", Contributor: "u1", Created: t0, Updated: t0}
	if err := st.CreateProject(ctx, p, "admin"); err != nil {
		return fail(err)
	}
	sub := store.Subscription{ID: "s1", ProjectID: "p1", Owner: "u1", Title: "Bench", Enabled: true, Created: t0, Updated: t0}
	if err := st.CreateSubscription(ctx, sub, store.Quota{}); err != nil {
		return fail(err)
	}
	var chs []string
	for i := range perRun {
		id := fmt.Sprintf("ch%d", i)
		c := store.Channel{ID: id, Owner: "u1", Kind: string(email.Kind), Title: id,
			Config: fmt.Appendf(nil, `{"to":"team%d@example.com"}`, i), Created: t0, Updated: t0}
		if err := st.CreateChannel(ctx, c, store.Quota{}); err != nil {
			return fail(err)
		}
		chs = append(chs, id)
	}
	var runs []string
	for r := range (n + perRun - 1) / perRun {
		at := t0.Add(time.Duration(r) * time.Minute)
		run := store.Run{ID: store.NewSortableID(), SubscriptionID: "s1", ScheduledAt: at, Started: at}
		var ds []store.Delivery
		for _, ch := range chs[:min(perRun, n-r*perRun)] {
			ds = append(ds, store.Delivery{ID: store.NewSortableID(), ChannelID: ch, Kind: string(email.Kind),
				Payload: store.Payload{Subject: subject, Text: text}})
		}
		if err := st.EnqueueRun(ctx, run, ds); err != nil {
			return fail(err)
		}
		runs = append(runs, run.ID)
	}
	return st, runs, nil
}

// awaitLedger waits until every run is rolled up as delivered.
func awaitLedger(ctx context.Context, st *store.Store, runs []string) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitTimeout)
	for _, id := range runs {
		for {
			r, err := st.RunByID(ctx, id)
			if err != nil {
				return err
			}
			if r.State == store.RunDelivered {
				break
			}
			if r.State != store.RunQueued {
				return fmt.Errorf("run %s: %s (%s)", id, r.State, r.Error)
			}
			select {
			case <-tick.C:
			case <-deadline:
				return fmt.Errorf("run %s still %s after %v", id, r.State, waitTimeout)
			}
		}
	}
	return nil
}
