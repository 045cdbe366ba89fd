package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// TestOpenFilesWaitsForJetStream opens the files bucket beside a NATS server
// whose JetStream has not started: OpenFiles waits, says so, and returns the
// bucket once JetStream runs.
func TestOpenFilesWaitsForJetStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := natsWithoutJetStream(t, dir, 0)
	n := connect(t, srv)
	log, waits := waitLogger()
	type opened struct {
		f   *Files
		err error
	}
	files := make(chan opened, 1)
	go func() {
		f, err := OpenFiles(t.Context(), impatient(t, n), FilesConfig{Scratch: t.TempDir(), Logger: log})
		files <- opened{f, err}
	}()
	awaitWait(t, waits, "files bucket")
	startJetStream(t, srv, dir)
	if o := <-files; o.err != nil {
		t.Fatalf("OpenFiles once JetStream runs: %v", o.err)
	}
}

// TestDeliveryWaitsForJetStream starts the relay and a worker beside a NATS
// server that came back without its JetStream, as a process started with a
// cluster that has not elected its leaders finds it. Each waits and says so,
// and neither is ready; once JetStream runs, the delivery enqueued meanwhile
// is sent.
func TestDeliveryWaitsForJetStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	dir := t.TempDir()
	first := natsWithoutJetStream(t, dir, 0)
	port := first.Addr().(*net.TCPAddr).Port
	startJetStream(t, first, dir)
	n := connect(t, first)
	js := impatient(t, n)
	ctx := awaitCtx(t)
	files, err := OpenFiles(ctx, js, FilesConfig{Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	first.Shutdown()
	first.WaitForShutdown()
	srv := natsWithoutJetStream(t, dir, port)

	_, ids := e.enqueue(store.Payload{Subject: "Waited for", Text: "t"}, e.channel(peer.Channel()))
	relayLog, relayWaits := waitLogger()
	workerLog, workerWaits := waitLogger()
	relay, err := NewRelay(e.st, js, files, e.box, e.deliveryBox, testConfig(), Options{Logger: relayLog})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(js, NewSQLiteLedger(e.st, nil, nil), files, e.deliveryBox,
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

	startJetStream(t, srv, dir)
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
	t.Parallel()
	n := connect(t, natsWithoutJetStream(t, t.TempDir(), 0))
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
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("create consumer: %w", context.DeadlineExceeded), true},
		{nats.ErrNoResponders, true},
		{&jetstream.APIError{Code: 503, ErrorCode: jsErrCodeClusterNotAvailable, Description: "JetStream system temporarily unavailable"}, true},
		{&jetstream.APIError{Code: 500, ErrorCode: jsErrCodeStreamCreate, Description: jsStoreFailed}, true},
		{&jetstream.APIError{Code: 500, ErrorCode: jsErrCodeStreamCreate, Description: "subjects overlap with an existing stream"}, false},
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

// natsWithoutJetStream starts a NATS server on 127.0.0.1:port (0: any free
// port) whose JetStream, with its storage in dir, is not started: nobody
// answers JetStream's API until startJetStream. It is shut down when the test
// ends, unless the test did first.
func natsWithoutJetStream(t *testing.T, dir string, port int) *server.Server {
	t.Helper()
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return startServer(t, &server.Options{ServerName: "herald", Host: "127.0.0.1", Port: port,
		StoreDir: dir, NoSigs: true, NoLog: true})
}

// startJetStream starts the JetStream of srv over its storage in dir.
func startJetStream(t *testing.T, srv *server.Server, dir string) {
	t.Helper()
	if err := srv.EnableJetStream(&server.JetStreamConfig{StoreDir: dir}); err != nil {
		t.Fatal(err)
	}
}

// connect connects to srv as a worker on another machine does, reconnecting
// when the server comes back.
func connect(t *testing.T, srv *server.Server) *NATS {
	t.Helper()
	n, err := Connect(ExternalConfig{URL: srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
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
