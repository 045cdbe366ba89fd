package worker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/feedchat"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/store"
)

func awaitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// TestDeliverEveryKind hands over one run to an e-mail, an SMS and a
// feed-chat channel and follows each delivery to its peer and the ledger,
// with each ledger.
func TestDeliverEveryKind(t *testing.T) {
	t.Parallel()
	eachLedger(t, deliverEveryKind)
}

func deliverEveryKind(t *testing.T, e *env) {
	smtpPeer := channeltest.NewSMTPServer(t)
	twilio := channeltest.NewTwilioServer(t)
	chatter := channeltest.NewChatterServer(t)
	senders := []channels.Sender{
		emailSender(t, smtpPeer.Host(), smtpPeer.Port()),
		sms.New(sms.Config{BaseURL: twilio.URL()}),
		feedchat.New(feedchat.Config{LoginURL: chatter.URL(), ClientID: chatter.ClientID(), ClientSecret: chatter.ClientSecret()}, nil),
	}
	csv := []byte("region,revenue\nEMEA,1200\nAPAC,900\n")
	payload := store.Payload{Subject: "Revenue is up", Text: "Revenue rose 3% to 2,100.",
		Attachments: []store.Attachment{attachment(t, "revenue.csv", "text/csv", csv)}}
	run, ids := e.enqueue(payload, e.channel(smtpPeer.Channel()), e.channel(twilio.Channel()), e.channel(chatter.Channel()))

	r := e.start(startNATS(t, t.TempDir()), senders, testConfig())
	r.relay.Notify()
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	e.stored(ids...)

	tests := []struct {
		name  string
		id    string
		check func(t *testing.T, d store.Delivery)
	}{
		{name: "email", id: ids[0], check: func(t *testing.T, d store.Delivery) {
			msgs, err := smtpPeer.Await(awaitCtx(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			m := msgs[0]
			if len(msgs) != 1 || m.Subject != payload.Subject || strings.TrimSpace(m.Text) != payload.Text {
				t.Errorf("received %d mails, first subject %q text %q", len(msgs), m.Subject, m.Text)
			}
			if len(m.Attachments) != 1 || m.Attachments[0].Name != "revenue.csv" || !bytes.Equal(m.Attachments[0].Data, csv) {
				t.Errorf("attachments = %+v", m.Attachments)
			}
			if !strings.Contains(m.MessageID, d.ID) || d.ProviderID != m.MessageID {
				t.Errorf("Message-ID %q, provider id %q: want both the same and naming delivery %s", m.MessageID, d.ProviderID, d.ID)
			}
		}},
		{name: "sms", id: ids[1], check: func(t *testing.T, d store.Delivery) {
			msgs, err := twilio.Await(awaitCtx(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			m := msgs[0]
			if len(msgs) != 1 || m.Body != sms.Body(payload.Subject, payload.Text) || m.To != "+15005550010" {
				t.Errorf("received %+v", msgs)
			}
			if m.IdempotencyKey != d.ID || d.ProviderID != m.SID {
				t.Errorf("idempotency key %q, provider id %q; want %q and %q", m.IdempotencyKey, d.ProviderID, d.ID, m.SID)
			}
		}},
		{name: "feedchat", id: ids[2], check: func(t *testing.T, d store.Delivery) {
			posts, err := chatter.Await(awaitCtx(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			p := posts[0]
			if len(posts) != 1 || p.Text != feedchat.Text(payload.Subject, payload.Text, channels.Links{}) {
				t.Errorf("received %+v", posts)
			}
			if p.IdempotencyKey != d.ID || d.ProviderID != p.ID {
				t.Errorf("idempotency key %q, provider id %q; want %q and %q", p.IdempotencyKey, d.ProviderID, d.ID, p.ID)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.delivery(tt.id)
			if d.State != store.DeliverySent || d.Attempts != 1 || d.SentAt.IsZero() {
				t.Errorf("ledger: state %s, %d attempts, sent at %v; want sent after 1 attempt", d.State, d.Attempts, d.SentAt)
			}
			tt.check(t, d)
		})
	}
	if got := e.run(run.ID); got.State != store.RunDelivered || got.Finished.IsZero() {
		t.Errorf("run state %q finished %v, want delivered and finished", got.State, got.Finished)
	}
}

// TestSMTPReplies scripts the SMTP server's answers to RCPT and checks the
// attempts, the ledger and the mails received.
func TestSMTPReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		failN, code  int
		maxAttempts  int
		want         outcome
		wantState    string
		wantAttempts int
		wantMails    int
		wantRun      string
		wantError    string
	}{
		{name: "451 twice then accepted", failN: 2, code: 451, maxAttempts: 5, want: outcomeSent,
			wantState: store.DeliverySent, wantAttempts: 3, wantMails: 1, wantRun: store.RunDelivered, wantError: "451"},
		{name: "550 fails at once", failN: 1, code: 550, maxAttempts: 5, want: outcomeFailed,
			wantState: store.DeliveryFailed, wantAttempts: 1, wantMails: 0, wantRun: store.RunFailed, wantError: "550"},
		{name: "451 until the attempts are used up", failN: 100, code: 451, maxAttempts: 3, want: outcomeFailed,
			wantState: store.DeliveryFailed, wantAttempts: 3, wantMails: 0, wantRun: store.RunFailed, wantError: "gave up after 3 attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachLedger(t, func(t *testing.T, e *env) {
				peer := channeltest.NewSMTPServer(t)
				counter := &countingSender{Sender: emailSender(t, peer.Host(), peer.Port())}
				run, ids := e.enqueue(store.Payload{Subject: "Alert", Text: "Threshold crossed"}, e.channel(peer.Channel()))
				peer.FailNext(tt.failN, tt.code)
				cfg := testConfig()
				cfg.MaxAttempts = tt.maxAttempts
				r := e.start(startNATS(t, t.TempDir()), []channels.Sender{counter}, cfg)
				r.relay.Notify()
				r.await(t, ids[0], tt.want)
				e.stored(ids[0])

				d := e.delivery(ids[0])
				if d.State != tt.wantState || d.Attempts != tt.wantAttempts || !strings.Contains(d.LastError, tt.wantError) {
					t.Errorf("ledger: %s after %d attempts, last error %q; want %s after %d with %q",
						d.State, d.Attempts, d.LastError, tt.wantState, tt.wantAttempts, tt.wantError)
				}
				if n := counter.calls.Load(); n != int64(tt.wantAttempts) {
					t.Errorf("%d sends, want %d", n, tt.wantAttempts)
				}
				r.stop(t) // nothing is left to retry once the worker stopped
				if n := counter.calls.Load(); n != int64(tt.wantAttempts) {
					t.Errorf("%d sends after the outcome, want %d", n, tt.wantAttempts)
				}
				if msgs := peer.Messages(); len(msgs) != tt.wantMails {
					t.Errorf("%d mails received, want %d", len(msgs), tt.wantMails)
				}
				if got := e.run(run.ID); got.State != tt.wantRun {
					t.Errorf("run state %q, want %q", got.State, tt.wantRun)
				}
			})
		})
	}
}

// TestSMTPServerDownThenBack takes the mail relay away and brings it back on the same
// port: the sends wait for it without being charged attempts, the breaker's probes find
// it back, and every delivery is sent at its first attempt.
func TestSMTPServerDownThenBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	relay := channeltest.NewTCPProxy(t, peer.Addr())
	sender := emailSender(t, "127.0.0.1", relay.Port())
	var ids []string
	for i := range 20 {
		_, got := e.enqueue(store.Payload{Subject: "Alert", Text: fmt.Sprint("Disk full ", i)}, e.channel(peer.Channel()))
		ids = append(ids, got...)
	}

	relay.Down()
	cfg := testConfig()
	cfg.ProbeInterval, cfg.ProbeIntervalMax = 10*time.Millisecond, 50*time.Millisecond
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{sender}, cfg)
	r.relay.Notify()
	deadline := time.Now().Add(testTimeout)
	for _, _, held := r.w.kinds[0].pool.state(); held == 0; _, _, held = r.w.kinds[0].pool.state() {
		if time.Now().After(deadline) {
			t.Fatal("the breaker did not open while the relay was down")
		}
		time.Sleep(time.Millisecond)
	}
	relay.Up(t)
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	if msgs, err := peer.Await(awaitCtx(t), len(ids)); err != nil || len(msgs) != len(ids) {
		t.Fatalf("received %d mails (%v), want %d", len(msgs), err, len(ids))
	}
	for _, id := range ids {
		if d := e.delivery(id); d.State != store.DeliverySent || d.Attempts != 1 || d.LastError != "" {
			t.Errorf("ledger: %s after %d attempts (last error %q); want sent at the first", d.State, d.Attempts, d.LastError)
		}
	}
}

// TestSettledWithoutSending covers the deliveries settled without a call to
// the sender: by the relay, which fails what no sender could send, and by the
// worker, whose ledger says a delivery it was handed is settled or spent.
func TestSettledWithoutSending(t *testing.T) {
	t.Parallel()
	const byRelay outcome = -1 // the relay fails it; no message reaches the worker
	mark := func(e *env, id string, mark func(ctx context.Context) (bool, error)) {
		if ok, err := mark(context.Background()); !ok || err != nil {
			e.t.Fatalf("mark %s: %v %v", id, ok, err)
		}
	}
	tests := []struct {
		name string
		// prepare hands over the delivery; settle, when set, changes the ledger
		// after its message was published.
		prepare   func(e *env, channelID string) (deliveryID string)
		settle    func(e *env, deliveryID string)
		want      outcome
		wantState string
		wantError string
	}{
		{name: "sent after it was published", want: outcomeSkipped, wantState: store.DeliverySent,
			settle: func(e *env, id string) {
				mark(e, id, func(ctx context.Context) (bool, error) { return e.st.MarkSent(ctx, id, "<earlier@example.com>", t0) })
			}},
		{name: "failed after it was published", want: outcomeSkipped, wantState: store.DeliveryFailed,
			settle: func(e *env, id string) {
				mark(e, id, func(ctx context.Context) (bool, error) { return e.st.MarkFailed(ctx, id, "550", t0) })
			}},
		{name: "channel deleted", want: byRelay, wantState: store.DeliveryFailed, wantError: "was deleted",
			prepare: func(e *env, _ string) string {
				_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, "gone")
				return ids[0]
			}},
		{name: "secret sealed for another channel", want: byRelay, wantState: store.DeliveryFailed, wantError: "secret",
			prepare: func(e *env, _ string) string {
				ch := e.channel(mailTo("a@example.com"))
				c, err := e.st.ChannelByID(context.Background(), ch)
				if err != nil {
					e.t.Fatal(err)
				}
				c.Secret = e.box.Seal([]byte("pw"), []byte("another-channel"))
				if err := e.st.UpdateChannel(context.Background(), c); err != nil {
					e.t.Fatal(err)
				}
				_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, ch)
				return ids[0]
			}},
		{name: "recipient not verified", want: byRelay, wantState: store.DeliveryFailed, wantError: "recipient not verified",
			prepare: func(e *env, _ string) string {
				ch := e.channel(mailTo("stranger@example.net"))
				c, err := e.st.ChannelByID(context.Background(), ch)
				if err != nil {
					e.t.Fatal(err)
				}
				c.Recipient = "stranger@example.net"
				if err := e.st.UpdateChannel(context.Background(), c); err != nil {
					e.t.Fatal(err)
				}
				_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, ch)
				return ids[0]
			}},
		{name: "last attempt recorded before a crash", want: outcomeFailed, wantState: store.DeliveryFailed,
			wantError: "gave up after 5 attempts: 451",
			settle: func(e *env, id string) {
				for range 5 {
					if _, err := e.st.RecordAttempt(context.Background(), id, "451 later", t0); err != nil {
						e.t.Fatal(err)
					}
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			peer := channeltest.NewSMTPServer(t)
			counter := &countingSender{Sender: emailSender(t, peer.Host(), peer.Port())}
			ch := e.channel(peer.Channel())
			var id string
			if tt.prepare != nil {
				id = tt.prepare(e, ch)
			} else {
				_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, ch)
				id = ids[0]
			}
			n := startNATS(t, t.TempDir())
			e.publish(n, testConfig())
			if tt.settle != nil {
				tt.settle(e, id)
			}
			if tt.want != byRelay {
				r := e.start(n, []channels.Sender{counter}, testConfig())
				r.await(t, id, tt.want)
			}
			if n := counter.calls.Load(); n != 0 {
				t.Errorf("%d sends, want none", n)
			}
			if d := e.delivery(id); d.State != tt.wantState || !strings.Contains(d.LastError, tt.wantError) {
				t.Errorf("ledger: %s, last error %q; want %s with %q", d.State, d.LastError, tt.wantState, tt.wantError)
			}
		})
	}
}

// TestStopFinishesSendInFlight stops the worker while a send is under way:
// the send is not cut and its outcome reaches the ledger before Run returns.
func TestStopFinishesSendInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	gate := gateEmail(t, peer, 1)
	run, ids := e.enqueue(store.Payload{Subject: "Alert", Text: "t"}, e.channel(peer.Channel()))
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{gate}, testConfig())
	r.relay.Notify()
	if got := <-gate.entered; got != ids[0] {
		t.Fatalf("sending %s, want %s", got, ids[0])
	}
	r.cancel()
	select {
	case err := <-r.done:
		t.Fatalf("Run returned with a send in flight: %v", err)
	default:
	}
	close(gate.release)
	r.stop(t)
	if d := e.delivery(ids[0]); d.State != store.DeliverySent {
		t.Errorf("ledger: %s (%s), want sent", d.State, d.LastError)
	}
	if got := e.run(run.ID); got.State != store.RunDelivered {
		t.Errorf("run state %q, want delivered", got.State)
	}
	if n := len(peer.Messages()); n != 1 {
		t.Errorf("%d mails received, want 1", n)
	}
}

// TestRelayWakeUps checks both ways the relay learns of a handover.
func TestRelayWakeUps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		wake func(r *running)
	}{
		{name: "notify", wake: func(r *running) { r.relay.Notify() }},
		{name: "sweep", wake: func(r *running) { r.sweep <- t0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			peer := channeltest.NewSMTPServer(t)
			ch := e.channel(peer.Channel())
			r := e.start(startNATS(t, t.TempDir()), []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, testConfig())
			<-r.idle // the start-up sweep found nothing
			_, ids := e.enqueue(store.Payload{Subject: "Woken", Text: "t"}, ch)
			tt.wake(r)
			r.await(t, ids[0], outcomeSent)
			if msgs, err := peer.Await(awaitCtx(t), 1); err != nil || msgs[0].Subject != "Woken" {
				t.Errorf("mails %v, %v", msgs, err)
			}
		})
	}
}

// TestRateLimit spaces the sends of a kind by its rate.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	ch := e.channel(peer.Channel())
	const n, perSecond = 5, 20.0
	var ids []string
	for range n {
		_, id := e.enqueue(store.Payload{Subject: "s", Text: "t"}, ch)
		ids = append(ids, id...)
	}
	cfg := testConfig()
	cfg.Kinds = map[channels.Kind]KindConfig{"email": {Rate: perSecond, Burst: 1}}
	start := time.Now()
	r := e.start(startNATS(t, t.TempDir()), []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, cfg)
	r.relay.Notify()
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	// The first send takes the one token; each further one waits for its own.
	if elapsed, least := time.Since(start), time.Duration(float64(n-1)/perSecond*float64(time.Second)); elapsed < least {
		t.Errorf("%d sends in %v, want at least %v at %v/s", n, elapsed, least, perSecond)
	}
}

// TestCopyInFlightIsNotSentTwice hands the worker two copies of one delivery
// while the first is being sent: the second is left alone.
func TestCopyInFlightIsNotSentTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	gate := gateEmail(t, peer, 2)
	counter := &countingSender{Sender: gate}
	ids := e.enqueueUnrelayed(store.Payload{Subject: "Twice?", Text: "t"}, e.channel(peer.Channel())) // published below instead
	n := startNATS(t, t.TempDir())
	r := e.start(n, []channels.Sender{counter}, testConfig())
	<-r.idle // the stream exists
	data := e.envelope(n, ids[0])
	for range 2 {
		// No message id: JetStream stores both copies, as after a redelivery.
		if _, err := n.JetStream().Publish(ctx, subject("email"), data); err != nil {
			t.Fatal(err)
		}
	}
	<-gate.entered
	r.await(t, ids[0], outcomeBusy)
	close(gate.release)
	r.await(t, ids[0], outcomeSent)
	r.stop(t)
	if n := counter.calls.Load(); n != 1 {
		t.Errorf("%d sends, want 1", n)
	}
	if msgs := peer.Messages(); len(msgs) != 1 {
		t.Errorf("%d mails received, want 1", len(msgs))
	}
}

// TestExternalConnection delivers through a connection made with Connect,
// as a worker beside an external NATS server does.
func TestExternalConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	server, err := StartEmbedded(t.TempDir(), EmbeddedConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Close)
	if server.ClientURL() == "" {
		t.Fatal("no client URL for a listening server")
	}
	client, err := Connect(ExternalConfig{URL: server.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	_, ids := e.enqueue(store.Payload{Subject: "Over TCP", Text: "t"}, e.channel(peer.Channel()))
	r := e.start(client, []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, testConfig())
	r.await(t, ids[0], outcomeSent)
	if msgs, err := peer.Await(awaitCtx(t), 1); err != nil || msgs[0].Subject != "Over TCP" {
		t.Errorf("mails %v, %v", msgs, err)
	}
}
