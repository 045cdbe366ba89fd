package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/heraldhq/herald/bench/benchapp"
)

// settle is how long a scenario watches the sink after the last delivery
// arrived, for mails that would arrive twice.
const settle = 2 * time.Second

// scenario is one topology: workers 0 is a single process with every role.
type scenario struct {
	name    string
	workers int
}

var scenarios = []scenario{
	{name: "single process", workers: 0},
	{name: "control + 1 worker", workers: 1},
	{name: "control + 2 workers", workers: 2},
}

// senders is how many processes send mail.
func (s scenario) senders() int { return max(s.workers, 1) }

// conc is how many sends at once each sending process makes: the total
// shared evenly, so that every scenario sends as many at once in all.
func (s scenario) conc(p params) int { return max(p.conc/s.senders(), 1) }

// bound is the most deliveries per second the senders can make when every
// send waits delay for the sink's answer; none without a delay.
func (s scenario) bound(p params) float64 {
	if p.delay <= 0 {
		return math.Inf(1)
	}
	return float64(s.senders()*s.conc(p)) / p.delay.Seconds()
}

// cpu is the core worker i (from 0) is pinned to: each its own while the
// machine has cores enough, none (-1) on a single core or for a single
// process, which may use them all.
func (s scenario) cpu(i int) int {
	if s.workers < 2 || runtime.NumCPU() < 2 {
		return -1
	}
	return i % runtime.NumCPU()
}

// params are the settings every scenario shares.
type params struct {
	burst   burst
	conc    int           // SMTP sends at once, in all the sending processes
	delay   time.Duration // the sink's answer to each message
	timeout time.Duration // for the burst, from its instant
}

// measurement is one run of one scenario.
type measurement struct {
	elapsed         time.Duration // from the instant to the last mail accepted
	total, distinct int           // mails the sink accepted, and distinct Message-IDs
}

func (m measurement) perSecond(n int) float64 { return float64(n) / m.elapsed.Seconds() }

// run starts the scenario's processes on fresh data folders against a new
// sink, makes the burst and times it from its instant until the sink has
// accepted every delivery. Every process is killed and every folder removed
// before it returns.
func (s scenario) run(ctx context.Context, bins *binaries, p params) (measurement, error) {
	dir, err := os.MkdirTemp("", "herald-scaleout-")
	if err != nil {
		return measurement{}, err
	}
	defer os.RemoveAll(dir)
	n := p.burst.deliveries()
	sink, err := benchapp.NewSink(n, benchapp.WithReplyDelay(p.delay), benchapp.WithParse())
	if err != nil {
		return measurement{}, err
	}
	defer sink.Close()
	var procs []*process
	defer func() {
		for _, pr := range slices.Backward(procs) {
			pr.kill()
		}
	}()
	api, err := s.start(ctx, bins, dir, p.env(sink.Port(), s.conc(p)), func(pr *process) { procs = append(procs, pr) })
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", s.name, err)
	}
	at, err := p.burst.prepare(ctx, api)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", s.name, err)
	}
	m, err := await(ctx, sink, procs, at, p.timeout)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", s.name, err)
	}
	if m.total != n || m.distinct != n {
		return m, fmt.Errorf("%s: %d mails, %d distinct, want %d", s.name, m.total, m.distinct, n)
	}
	return m, nil
}

// env is the configuration every Herald process of a scenario gets.
func (p params) env(smtpPort, conc int) []string {
	return []string{
		"HERALD_ADMIN_PASSWORD=" + benchapp.AdminPassword, "HERALD_AUTH_PASSWORDCOST=4",
		"HERALD_METRICS_LISTEN=127.0.0.1:0", "HERALD_LOG_ACCESS=off", "HERALD_LOG_LEVEL=warn",
		"HERALD_SMTP_HOST=127.0.0.1", fmt.Sprintf("HERALD_SMTP_PORT=%d", smtpPort), "HERALD_SMTP_TLSPOLICY=none",
		"HERALD_SMTP_FROM=alerts@herald.test", fmt.Sprintf("HERALD_SMTP_CONCURRENCY=%d", conc),
		"HERALD_SUBSCRIPTIONS_MAXPERUSER=10000", "HERALD_SUBSCRIPTIONS_MAXPERPROJECT=10000",
		"HERALD_SUBSCRIPTIONS_MAXCHANNELSPERUSER=10000",
	}
}

// start runs the scenario's processes with their data under dir, handing
// each to started as soon as it runs, and returns the API's URL.
func (s scenario) start(ctx context.Context, bins *binaries, dir string, env []string, started func(*process)) (string, error) {
	if s.workers == 0 {
		h, err := startHerald(ctx, bins.herald, "herald", filepath.Join(dir, "herald"), env, -1, true)
		if err != nil {
			return "", err
		}
		started(h.process)
		return h.url, nil
	}
	nats, err := startNATS(ctx, bins.nats, filepath.Join(dir, "nats"))
	if err != nil {
		return "", err
	}
	started(nats.process)
	keyFile, err := writeDeliveryKey(dir)
	if err != nil {
		return "", err
	}
	env = append(env, "HERALD_NATS_URL="+nats.url, "HERALD_NATS_REPLICAS=1",
		"HERALD_DELIVERY_LEDGER=jetstream", "HERALD_DELIVERY_KEYFILE="+keyFile)
	control, err := startHerald(ctx, bins.herald, "control", filepath.Join(dir, "control"), slices.Concat(env, []string{"HERALD_ROLES=api,engine"}), -1, true)
	if err != nil {
		return "", err
	}
	started(control.process)
	for i := range s.workers {
		name := fmt.Sprintf("worker-%d", i+1)
		w, err := startHerald(ctx, bins.herald, name, filepath.Join(dir, name), slices.Concat(env, []string{"HERALD_ROLES=worker"}), s.cpu(i), false)
		if err != nil {
			return "", err
		}
		started(w.process)
	}
	return control.url, nil
}

// writeDeliveryKey writes a delivery key file (32 random bytes in base64)
// into dir and returns its path.
func writeDeliveryKey(dir string) (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "delivery.key")
	return path, os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600)
}

// await waits until the sink has accepted every delivery, and settle more,
// failing when a process exits or timeout has passed since the instant at.
func await(ctx context.Context, sink *benchapp.Sink, procs []*process, at time.Time, timeout time.Duration) (measurement, error) {
	stop := make(chan struct{})
	defer close(stop)
	died := exited(stop, procs)
	deadline := time.NewTimer(time.Until(at.Add(timeout)))
	defer deadline.Stop()
	select {
	case <-sink.Done():
	case err := <-died:
		return measurement{}, err
	case <-ctx.Done():
		return measurement{}, ctx.Err()
	case <-deadline.C:
		total, distinct := sink.Counts()
		return measurement{}, fmt.Errorf("%d mails (%d distinct) within %v of the instant", total, distinct, timeout)
	}
	m := measurement{elapsed: time.Since(at)}
	select {
	case <-time.After(settle):
	case err := <-died:
		return measurement{}, err
	case <-ctx.Done():
		return measurement{}, ctx.Err()
	}
	m.total, m.distinct = sink.Counts()
	return m, nil
}
