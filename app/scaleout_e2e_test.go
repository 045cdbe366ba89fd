package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/internal/natstest"
	"github.com/heraldhq/herald/internal/paralleltest"
	"github.com/nats-io/nats.go/jetstream"
)

// TestScaleOutSurvivesLosingAWorkerAndANATSNode runs the scale-out topology as child
// processes: three clustered nats-servers, one control process (api and engine) and two
// worker-only processes, with the JetStream ledger and three replicas. 1,000
// subscriptions fire 5,000 deliveries at one instant; halfway through, one worker is
// killed with SIGKILL and so is the NATS server that leads the delivery stream.
// Every mail arrives, duplicates stay within the killed worker's unrecorded sends, and every
// run in the control process's history is final.
func TestScaleOutSurvivesLosingAWorkerAndANATSNode(t *testing.T) {
	gate.Alone(t) // it holds the recovery to a time, which other tests' computing would stretch
	if testing.Short() {
		t.Skip("three nats-servers and three herald processes")
	}
	paralleltest.AloneOnMachine(t) // nor other packages' heavy tests
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
	// A mail's path: its stream and the e-mail consumer; the ledger's bucket,
	// where a send is claimed and recorded; the results stream, where the
	// record is published before the send slot is free.
	onPath := []raftGroup{{"HERALD_DELIVERIES", ""}, {"HERALD_DELIVERIES", "herald-email"},
		{"KV_HERALD_LEDGER", ""}, {"HERALD_RESULTS", ""}}
	orphans := slices.DeleteFunc(ledBy(t, cluster, leader), func(g raftGroup) bool {
		return !slices.Contains(onPath, g)
	})
	for _, n := range cluster.Nodes {
		if n.Name == leader {
			n.Kill() // no clean hand-over of its leadership
		}
	}
	before, _ := d.counts()
	lost := time.Now()
	began := firstOf(d.smtp.Messages())
	elected := newLeadersAt(t, cluster, orphans, leader)
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
	if dups > 24 {
		t.Errorf("%d duplicates, more than the killed worker's accepted, unrecorded sends may be (three per slot, 24)", dups)
	}
	// The target is every mail within 10 s of the kill on a quiet machine
	// (11.1-18.8 s in six runs on two cores, none within). Of that,
	// nats-server takes an election of its own for each stream and consumer
	// on a mail's path that the killed server led, each an election timeout
	// drawn from 4 to 9 s, which no setting shortens, and more on a busy
	// machine; what is Herald's starts once every one of them has its
	// leader: the surviving worker sends the rest, and the killed worker's
	// messages once the ack wait hands them out again. The bound is three
	// times what the rest takes at the pace both workers kept before the
	// kill, at least 10 s: Herald's part took 0.6-2.5 times that on a quiet
	// machine and a busy one, and a recovery that waits out a timeout takes
	// tens of seconds.
	var e elections
	select {
	case e = <-elected:
	case <-time.After(10 * time.Second):
		t.Fatalf("the streams and consumers on a mail's path that %s led had no new leaders 10s after the last mail", leader)
	}
	pace := float64(before) / lost.Sub(began).Seconds()
	rest := time.Duration(float64(d.mails()-before) / pace * float64(time.Second))
	want := max(10*time.Second, 3*rest)
	t.Logf("new leaders after the kill: %s; the last mail came %s after the last of them (the rest at the pace before the kill, %.0f mails/s: %s)",
		e.after(lost), done.Sub(e.last).Round(time.Millisecond), pace, rest.Round(time.Millisecond))
	if after := done.Sub(e.last); after > want {
		t.Errorf("the last mail arrived %s after the last new leader (%s after the kill), want within %s",
			after.Round(time.Millisecond), done.Sub(lost).Round(time.Millisecond), want.Round(time.Millisecond))
	}
}

// A raftGroup is a stream, or a consumer of one: each elects its own leader.
type raftGroup struct{ stream, consumer string }

func (g raftGroup) String() string {
	if g.consumer == "" {
		return g.stream
	}
	return g.stream + "/" + g.consumer
}

// ledBy lists the streams and consumers node leads.
func ledBy(t *testing.T, cluster *natstest.Cluster, node string) []raftGroup {
	t.Helper()
	js := cluster.JetStream()
	defer js.Conn().Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []raftGroup
	streams := js.ListStreams(ctx)
	for info := range streams.Info() {
		name := info.Config.Name
		if info.Cluster != nil && info.Cluster.Leader == node {
			out = append(out, raftGroup{stream: name})
		}
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		consumers := s.ListConsumers(ctx)
		for ci := range consumers.Info() {
			if ci.Cluster != nil && ci.Cluster.Leader == node {
				out = append(out, raftGroup{stream: name, consumer: ci.Name})
			}
		}
		if err := consumers.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := streams.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// elections says when each of a set of raft groups first had a new leader,
// and when the last of them did.
type elections struct {
	at   map[raftGroup]time.Time
	last time.Time
}

// after lists each group's election, as the time after since.
func (e elections) after(since time.Time) string {
	var s []string
	for g, at := range e.at {
		s = append(s, fmt.Sprintf("%s %s", g, at.Sub(since).Round(time.Millisecond)))
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// newLeadersAt watches groups on cluster, from now until the test ends, for
// leaders other than old, and sends the elections once every group has one.
func newLeadersAt(t *testing.T, cluster *natstest.Cluster, groups []raftGroup, old string) <-chan elections {
	t.Helper()
	js := cluster.JetStream()
	out := make(chan elections, 1)
	var mu sync.Mutex
	e := elections{at: map[raftGroup]time.Time{}}
	var stops []func()
	for _, g := range groups {
		stops = append(stops, every(100*time.Millisecond, func() bool {
			if l, err := leaderOf(js, g); err != nil || l == "" || l == old {
				return true
			}
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			e.at[g], e.last = now, now
			if len(e.at) == len(groups) {
				out <- e
			}
			return false
		}))
	}
	t.Cleanup(func() {
		for _, stop := range stops {
			stop()
		}
		js.Conn().Close()
	})
	return out
}

// leaderOf names the server that leads g, as the cluster says within a second.
func leaderOf(js jetstream.JetStream, g raftGroup) (string, error) {
	if g.consumer == "" {
		info, err := streamInfo(js, g.stream, time.Second)
		if err != nil {
			return "", err
		}
		return info.Cluster.Leader, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := js.Consumer(ctx, g.stream, g.consumer)
	if err != nil {
		return "", err
	}
	info := c.CachedInfo()
	if info.Cluster == nil {
		return "", fmt.Errorf("consumer %s: no cluster information", g)
	}
	return info.Cluster.Leader, nil
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

// firstOf returns when the first of msgs was accepted.
func firstOf(msgs []channeltest.Email) time.Time {
	var first time.Time
	for _, m := range msgs {
		if first.IsZero() || m.Received.Before(first) {
			first = m.Received
		}
	}
	return first
}

// firstSecondOf returns the mails accepted within a second of the first.
func firstSecondOf(msgs []channeltest.Email) []channeltest.Email {
	if len(msgs) == 0 {
		return nil
	}
	first := firstOf(msgs)
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
