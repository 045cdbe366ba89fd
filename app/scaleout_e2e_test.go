package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/internal/natstest"
	"github.com/nats-io/nats.go/jetstream"
)

// TestScaleOutSurvivesLosingAWorkerAndANATSNode runs the scale-out topology as child
// processes: three clustered nats-servers, one control process (api and engine) and two
// worker-only processes, with the JetStream ledger and three replicas. 1,000
// subscriptions fire 5,000 deliveries at one instant; halfway through, one worker is
// killed with SIGKILL and so is the NATS server that leads the delivery stream.
// Every mail arrives, duplicates stay within the killed worker's send slots, and every
// run in the control process's history is final.
func TestScaleOutSurvivesLosingAWorkerAndANATSNode(t *testing.T) {
	gate.Alone(t) // it holds the recovery to a time, which other tests' computing would stretch
	if testing.Short() {
		t.Skip("three nats-servers and three herald processes")
	}
	const perRun = 5
	cluster := natstest.Start(t, 3)
	keyFile := filepath.Join(t.TempDir(), "delivery.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(randomKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// At info the processes say when they lose and take the control lease
	// and reconnect, a handful of lines that tell a slow recovery's cause.
	shared := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_NATS_REPLICAS=3",
		"HERALD_DELIVERY_LEDGER=jetstream", "HERALD_DELIVERY_KEYFILE=" + keyFile, "HERALD_DELIVERY_ACKWAIT=2s",
		"HERALD_LOG_LEVEL=info"}
	var workers []*apptest.Process
	d := newDrillOf(t, perRun, func(d *drill) {
		// Each worker sends from an address of its own, which tells the SMTP
		// server which one sent a mail.
		workerEnv := append(slices.Clone(d.env[:len(d.env)-1]), "HERALD_ROLES=worker")
		workers = []*apptest.Process{
			apptest.StartProcess(t, t.TempDir(), append(workerEnv, "HERALD_SMTP_FROM="+workerFrom(1))...),
			apptest.StartProcess(t, t.TempDir(), append(workerEnv, "HERALD_SMTP_FROM="+workerFrom(2))...),
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("control printed:\n%s", tail(d.p.Out.String(), 20000))
				for i, w := range workers {
					t.Logf("worker %d printed:\n%s", i+1, tail(w.Out.String(), 20000))
				}
			}
		})
		// A worker is ready once its consumers are set up, which a cluster
		// still electing its leaders can delay; both are to take part from
		// the start.
		for _, w := range workers {
			waitFor(t, func() bool { code, _ := readyz(t, w.OpsURL); return code == 200 })
		}
	}, append(shared, "HERALD_ROLES=api,engine")...)
	d.waitAccepted(d.mails() / 2)
	byWorker := bySender(d.smtp.Messages())
	workers[0].Kill()
	leader := streamLeader(t, cluster, "HERALD_DELIVERIES")
	for _, n := range cluster.Nodes {
		if n.Name == leader {
			n.Kill() // no clean hand-over of its leadership
		}
	}
	before, _ := d.counts()
	lost := time.Now()
	elected := newLeaderAt(t, cluster, "HERALD_DELIVERIES", leader)
	var timeline []int // mails accepted, each half second after the kill
	stopTimeline := every(500*time.Millisecond, func() bool {
		timeline = append(timeline, len(d.smtp.Messages()))
		return true
	})
	done := d.waitMails(d.mails(), 60*time.Second)
	stopTimeline()
	t.Logf("mails accepted each half second after the kill: %v", timeline)
	// The outcomes on their way to the control process when its NATS
	// server died come again after the ack wait (2s here), not JetStream's
	// default 30s, which left runs open 19s after the last mail.
	d.waitFinal(10 * time.Second)
	// Both share the burst from its first second. The target is 40% each
	// (measured 43-57% on a quiet and a busy machine); the test holds 30%,
	// which a worker that waits out the other's first second (0%) fails and
	// the split of a busy machine does not.
	firstSecond := bySender(firstSecondOf(d.smtp.Messages()))
	total := firstSecond[workerFrom(1)] + firstSecond[workerFrom(2)]
	for i := range workers {
		if n := firstSecond[workerFrom(i+1)]; float64(n) < 0.3*float64(total) {
			t.Errorf("worker %d sent %d of the first second's %d mails, want at least 30%%", i+1, n, total)
		}
	}
	distinct, dups := d.counts()
	t.Logf("first second: %d mails, %d and %d by the workers; worker 1 and %s killed after %d of %d mails (%d and %d by the workers); all %d arrived %s later, %d duplicates",
		total, firstSecond[workerFrom(1)], firstSecond[workerFrom(2)], leader, before, d.mails(),
		byWorker[workerFrom(1)], byWorker[workerFrom(2)], distinct, done.Sub(lost).Round(time.Millisecond), dups)
	if dups > 8 {
		t.Errorf("%d duplicates, more than the killed worker's send slots (8)", dups)
	}
	// The target is every mail within 10 s of the kill on a quiet machine
	// (8.9-10.3 s there). Of that, the stream's new leader takes nats-server
	// an election timeout of its own, drawn from 4 to 9 s, which no setting
	// shortens; what is Herald's starts once the stream has its leader. The
	// bound holds Herald's part to 10 s, which waiting out the publish
	// timeout instead of publishing again (20.5 s in all) fails.
	var at time.Time
	select {
	case at = <-elected:
	case <-time.After(10 * time.Second):
		t.Fatalf("the stream had no new leader 10s after the last mail")
	}
	t.Logf("the stream had a new leader %s after the kill; the last mail came %s after that",
		at.Sub(lost).Round(time.Millisecond), done.Sub(at).Round(time.Millisecond))
	if after := done.Sub(at); after > 10*time.Second {
		t.Errorf("the last mail arrived %s after the stream had a new leader (%s after the kill), want within 10s",
			after.Round(time.Millisecond), done.Sub(lost).Round(time.Millisecond))
	}
}

// newLeaderAt watches stream on cluster, from now until the test ends, for a
// leader other than old, and sends when it first saw one.
func newLeaderAt(t *testing.T, cluster *natstest.Cluster, stream, old string) <-chan time.Time {
	t.Helper()
	js := cluster.JetStream()
	seen := make(chan time.Time, 1)
	stop := every(50*time.Millisecond, func() bool {
		info, err := streamInfo(js, stream, time.Second)
		if err != nil || info.Cluster.Leader == "" || info.Cluster.Leader == old {
			return true
		}
		seen <- time.Now()
		return false
	})
	t.Cleanup(func() { stop(); js.Conn().Close() })
	return seen
}

// every calls f each period until f returns false or the returned stop is
// called; stop returns once f no longer runs.
func every(period time.Duration, f func() bool) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				if !f() {
					return
				}
			}
		}
	}()
	return func() { close(quit); <-done }
}

// streamInfo is what the cluster says of stream within d; the stream's
// lookup carries it.
func streamInfo(js jetstream.JetStream, stream string, d time.Duration) (*jetstream.StreamInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info := s.CachedInfo()
	if info.Cluster == nil {
		return nil, fmt.Errorf("stream %s: no cluster information", stream)
	}
	return info, nil
}

// workerFrom is the address worker i sends from.
func workerFrom(i int) string { return fmt.Sprintf("alerts-%d@herald.test", i) }

// firstSecondOf returns the mails accepted within a second of the first.
func firstSecondOf(msgs []channeltest.Email) []channeltest.Email {
	if len(msgs) == 0 {
		return nil
	}
	first := msgs[0].Received
	for _, m := range msgs {
		if m.Received.Before(first) {
			first = m.Received
		}
	}
	var out []channeltest.Email
	for _, m := range msgs {
		if m.Received.Before(first.Add(time.Second)) {
			out = append(out, m)
		}
	}
	return out
}

// bySender counts the mails by their envelope sender.
func bySender(msgs []channeltest.Email) map[string]int {
	out := map[string]int{}
	for _, m := range msgs {
		out[m.MailFrom]++
	}
	return out
}

// streamLeader names the NATS server that leads stream.
func streamLeader(t *testing.T, cluster *natstest.Cluster, stream string) string {
	t.Helper()
	js := cluster.JetStream()
	defer js.Conn().Close()
	info, err := streamInfo(js, stream, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 {
		t.Errorf("stream %s has %d replicas, want 3", stream, info.Config.Replicas)
	}
	return info.Cluster.Leader
}

func randomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}
