package worker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
)

// streamed returns the body of the one message the delivery stream holds for id.
func streamed(t *testing.T, n *NATS, kind, id string) []byte {
	t.Helper()
	stream, err := n.JetStream().Stream(awaitCtx(t), DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := stream.GetLastMsgForSubject(awaitCtx(t), deliverySubject(kind, id))
	if err != nil {
		t.Fatal(err)
	}
	return m.Data
}

// TestMessageIsSelfContained publishes an e-mail with an attachment and an SMS whose
// channel has a secret, then takes away everything a sender elsewhere would not have:
// the attachment's file, the store. A worker with the JetStream ledger and its own
// scratch folder still delivers both, and the secret travels sealed.
func TestMessageIsSelfContained(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, LedgerJetStream)
	smtpPeer := channeltest.NewSMTPServer(t)
	twilio := channeltest.NewTwilioServer(t)
	csv := []byte("region,revenue\nEMEA,1200\n")
	a := attachment(t, "revenue.csv", "text/csv", csv)
	_, ids := e.enqueue(store.Payload{Subject: "Revenue", Text: "Up 3%", Attachments: []store.Attachment{a}},
		e.channel(smtpPeer.Channel()), e.channel(twilio.Channel()))
	n := startNATS(t, t.TempDir())
	e.publish(n, testConfig())

	mail, text := streamed(t, n, "email", ids[0]), streamed(t, n, "sms", ids[1])
	token := []byte(twilio.Channel().Secret)
	var env envelope
	if err := json.Unmarshal(text, &env); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(text, token) || bytes.Contains(env.Secret, token) || len(env.Secret) == 0 {
		t.Errorf("the SMS message does not carry the channel's secret sealed: %s", text)
	}
	if !bytes.Contains(mail, []byte(`"object":{"name":"`)) || bytes.Contains(mail, []byte(a.Path)) {
		t.Errorf("the mail names its attachment by a path, not by its object: %s", mail)
	}
	if err := os.Remove(a.Path); err != nil {
		t.Fatal(err)
	}
	e.st.Close() // the worker's process has no store

	files, err := OpenFiles(awaitCtx(t), n.JetStream(), FilesConfig{Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := NewKVLedger(awaitCtx(t), n.JetStream(), KVLedgerConfig{Owner: rand.Text()})
	if err != nil {
		t.Fatal(err)
	}
	senders := []channels.Sender{emailSender(t, smtpPeer.Host(), smtpPeer.Port()), sms.New(sms.Config{BaseURL: twilio.URL()})}
	w, err := New(n.JetStream(), kv, files, e.deliveryBox, senders, testConfig(), Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan settled, 4)
	w.onSettle = func(id string, o outcome) { events <- settled{id, o} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for range ids {
		if ev := <-events; ev.o != outcomeSent {
			t.Fatalf("delivery %s: %v, want sent", ev.id, ev.o)
		}
	}
	msgs, err := smtpPeer.Await(awaitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].Attachments; len(got) != 1 || got[0].Name != "revenue.csv" || !bytes.Equal(got[0].Data, csv) {
		t.Errorf("attachments = %+v, want revenue.csv as it was", got)
	}
	if got := twilio.Messages(); len(got) != 1 || !strings.Contains(got[0].Body, "Up 3%") {
		t.Errorf("SMS = %+v", got)
	}
}

// TestWrongDeliveryKeyFailsForGood: a worker whose delivery key is not the relay's
// cannot open the channel's secret, and fails the delivery without sending it.
func TestWrongDeliveryKeyFailsForGood(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	twilio := channeltest.NewTwilioServer(t)
	_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t"}, e.channel(twilio.Channel()))
	other, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	e.deliveryBox, other = other, e.deliveryBox
	n := startNATS(t, t.TempDir())
	// The relay seals with the right key; the worker started below gets the other one.
	r := e.relay(n, nil, testConfig(), Options{})
	r.delivery = other
	if _, err := ensureStream(awaitCtx(t), testLogger(t), n.JetStream(), r.cfg); err != nil {
		t.Fatal(err)
	}
	if err := r.publishOutbox(awaitCtx(t)); err != nil {
		t.Fatal(err)
	}
	w := e.start(n, []channels.Sender{sms.New(sms.Config{BaseURL: twilio.URL()})}, testConfig())
	w.await(t, ids[0], outcomeFailed)
	if d := e.delivery(ids[0]); d.State != store.DeliveryFailed || !strings.Contains(d.LastError, "delivery key") {
		t.Errorf("delivery %s: %q, want failed naming the delivery key", d.State, d.LastError)
	}
	if got := twilio.Messages(); len(got) != 0 {
		t.Errorf("%d SMS sent with a secret that did not open", len(got))
	}
}

// TestLargeHTMLTravelsAsAFile: an HTML part that would make the message larger than
// the server takes goes to the object store, and comes back whole; a message too
// large even without it cannot be delivered.
func TestLargeHTMLTravelsAsAFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := startNATS(t, t.TempDir())
	html := "<p>" + strings.Repeat("Revenue by region, ", 1000) + "</p>"
	_, ids := e.enqueue(store.Payload{Subject: "s", Text: "t", HTML: html}, e.channel(mailTo("ops@example.com")))
	out, err := e.st.OutgoingDeliveries(awaitCtx(t), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	files := e.files(n)
	data, err := seal(awaitCtx(t), out[ids[0]], e.box, e.deliveryBox, files, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	if len(data) > 4096 || env.HTML != "" || env.HTMLObject == nil {
		t.Fatalf("a %d-byte message with %d bytes of HTML inline, object %v", len(data), len(env.HTML), env.HTMLObject)
	}
	m, err := env.open(awaitCtx(t), e.deliveryBox, files)
	if err != nil || m.HTML != html {
		t.Fatalf("opened HTML of %d bytes (%v), want the %d sent", len(m.HTML), err, len(html))
	}

	_, ids = e.enqueue(store.Payload{Subject: "s", Text: strings.Repeat("x", 5000)}, e.channel(mailTo("cfo@example.com")))
	if out, err = e.st.OutgoingDeliveries(awaitCtx(t), ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := seal(awaitCtx(t), out[ids[0]], e.box, e.deliveryBox, files, 4096); !errors.Is(err, errUndeliverable) {
		t.Errorf("a message over the limit without HTML: %v, want undeliverable", err)
	}
}

// TestEarlierMessageIsPublishedAgainSealed: a message of the earlier form, the bare
// delivery id, is terminated by the worker; the reconciler then finds the delivery
// pending with nothing in the stream, publishes it sealed, and it is sent once. (The
// earlier form carried the delivery id as its message id too, so in production the
// stream drops that re-publish until its dedupe window has passed; the message here
// has none, to leave the window out of the test.)
func TestEarlierMessageIsPublishedAgainSealed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	ids := e.enqueueUnrelayed(store.Payload{Subject: "From before", Text: "t"}, e.channel(peer.Channel())) // published by the earlier version
	ctx := awaitCtx(t)
	n := startNATS(t, t.TempDir())
	r := e.start(n, []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, testConfig())
	<-r.idle // the stream exists
	if _, err := n.JetStream().Publish(ctx, deliverySubject("email", ids[0]), []byte(ids[0])); err != nil {
		t.Fatal(err)
	}
	awaitStreamEmpty(t, n)
	if got := peer.Messages(); len(got) != 0 {
		t.Fatalf("%d mails from a message no sender can read", len(got))
	}
	if published, err := r.relay.reconcile(ctx); err != nil || published != 1 {
		t.Fatalf("reconcile published %d (%v), want 1", published, err)
	}
	r.await(t, ids[0], outcomeSent)
	if got := messageIDs(peer.Messages()); len(got) != 1 {
		t.Errorf("Message-IDs %v, want one", got)
	}
}
