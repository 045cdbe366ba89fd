package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// TestSetupWaitsForJetStream starts delivery beside a NATS server whose
// JetStream does not answer, as a process started with a cluster that has not
// elected its leaders finds it. The files bucket, the relay and the worker
// each wait and say so, and the relay and the worker are not ready; once
// JetStream runs, the delivery enqueued meanwhile is sent.
func TestSetupWaitsForJetStream(t *testing.T) {
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	n := startNATS(t, t.TempDir())
	js := impatient(t, n)
	ctx := awaitCtx(t)
	filesLog, filesWaits := waitLogger()

	stopJetStream(t, n)
	type opened struct {
		f   *Files
		err error
	}
	files := make(chan opened, 1)
	go func() {
		f, err := OpenFiles(t.Context(), js, FilesConfig{Scratch: t.TempDir(), Logger: filesLog})
		files <- opened{f, err}
	}()
	awaitWait(t, filesWaits, "files bucket")
	startJetStream(t, n)
	o := <-files
	if o.err != nil {
		t.Fatalf("OpenFiles once JetStream runs: %v", o.err)
	}

	stopJetStream(t, n)
	_, ids := e.enqueue(store.Payload{Subject: "Waited for", Text: "t"}, e.channel(peer.Channel()))
	relayLog, relayWaits := waitLogger()
	workerLog, workerWaits := waitLogger()
	relay, err := NewRelay(e.st, js, o.f, e.box, e.deliveryBox, testConfig(), Options{Logger: relayLog})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(js, NewSQLiteLedger(e.st, nil, nil), o.f, e.deliveryBox,
		[]channels.Sender{emailSender(t, peer.Host(), peer.Port())}, testConfig(), Options{Logger: workerLog})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- relay.Run(runCtx) }()
	go func() { done <- w.Run(runCtx) }()
	awaitWait(t, relayWaits, "delivery stream")
	awaitWait(t, workerWaits, "delivery stream")
	for name, check := range map[string]func(context.Context) error{"relay": relay.Check, "worker": w.Check} {
		if err := check(ctx); !errors.Is(err, errNotSetUp) {
			t.Errorf("%s's readiness while JetStream is away = %v, want %v", name, err, errNotSetUp)
		}
	}

	startJetStream(t, n)
	msgs, err := peer.Await(ctx, 1)
	if err != nil || msgs[0].Subject != "Waited for" {
		t.Fatalf("mails %v, %v", msgs, err)
	}
	for name, check := range map[string]func(context.Context) error{"relay": relay.Check, "worker": w.Check} {
		if err := check(ctx); err != nil {
			t.Errorf("%s's readiness once set up: %v", name, err)
		}
	}
	stop()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	if d := e.delivery(ids[0]); d.State != store.DeliverySent {
		t.Errorf("delivery %s, want sent", d.State)
	}
}

// TestSetupStopsWhileWaiting: a worker stopped while it waits for JetStream
// returns at once, saying it was stopped.
func TestSetupStopsWhileWaiting(t *testing.T) {
	n := startNATS(t, t.TempDir())
	stopJetStream(t, n)
	log, waits := waitLogger()
	w, err := New(impatient(t, n), nil, nil, nil, []channels.Sender{emailSender(t, "127.0.0.1", 1)}, testConfig(),
		Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	awaitWait(t, waits, "delivery stream")
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run stopped while waiting = %v, want context.Canceled", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Run did not return once stopped")
	}
}

func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("create consumer: %w", context.DeadlineExceeded), true},
		{nats.ErrNoResponders, true},
		{&jetstream.APIError{Code: 503, ErrorCode: jsErrCodeClusterNotAvailable, Description: "JetStream system temporarily unavailable"}, true},
		{jetstream.ErrJetStreamNotEnabledForAccount, false},
		{jetstream.ErrStreamNotFound, false},
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeConsumerCreate, Description: "bad filter"}, false},
		{errors.New("other"), false},
	} {
		if got := unavailable(c.err); got != c.want {
			t.Errorf("unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// impatient is a JetStream context over n's connection whose requests time
// out after a second rather than five, so that tries while JetStream is away
// end sooner.
func impatient(t *testing.T, n *NATS) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(n.nc, jetstream.WithDefaultTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// stopJetStream stops the JetStream of n's server and keeps its state on disk;
// the server goes on serving plain NATS, and JetStream's requests time out.
func stopJetStream(t *testing.T, n *NATS) {
	t.Helper()
	if err := n.srv.ShutdownJetStream(); err != nil {
		t.Fatal(err)
	}
}

// startJetStream starts the JetStream of n's server again, over its state on disk.
func startJetStream(t *testing.T, n *NATS) {
	t.Helper()
	if err := n.srv.EnableJetStream(nil); err != nil {
		t.Fatal(err)
	}
}

// waitLogger returns a logger that hands over the step of each warning that
// JetStream is unavailable.
func waitLogger() (*slog.Logger, <-chan string) {
	steps := make(chan string, 64)
	return slog.New(waitRecorder{steps}), steps
}

type waitRecorder struct{ steps chan<- string }

func (h waitRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h waitRecorder) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h waitRecorder) WithGroup(string) slog.Handler                { return h }

func (h waitRecorder) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "step" {
			select {
			case h.steps <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}

// awaitWait waits for a warning that step waits for JetStream.
func awaitWait(t *testing.T, steps <-chan string, step string) {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		select {
		case s := <-steps:
			if s == step {
				return
			}
		case <-timeout:
			t.Fatalf("no warning that %q waits for JetStream", step)
		}
	}
}
