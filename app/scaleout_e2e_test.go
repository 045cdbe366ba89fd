package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/app/apptest"
)

// TestScaleOutSurvivesLosingAWorkerAndANATSNode runs the scale-out topology as child
// processes: three clustered nats-servers, one control process (api and engine) and two
// worker-only processes, with the JetStream ledger and three replicas. 1,000
// subscriptions fire 5,000 deliveries at one instant; halfway through, one worker is
// killed with SIGKILL and so is the NATS server that leads the delivery stream.
// Every mail arrives, duplicates stay within the killed worker's send slots, and every
// run in the control process's history is final.
func TestScaleOutSurvivesLosingAWorkerAndANATSNode(t *testing.T) {
	if testing.Short() {
		t.Skip("three nats-servers and three herald processes")
	}
	const perRun = 5
	cluster := apptest.StartNATSCluster(t, 3)
	keyFile := filepath.Join(t.TempDir(), "delivery.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(randomKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := []string{"HERALD_NATS_URL=" + cluster.URL(), "HERALD_NATS_REPLICAS=3",
		"HERALD_DELIVERY_LEDGER=jetstream", "HERALD_DELIVERY_KEYFILE=" + keyFile, "HERALD_DELIVERY_ACKWAIT=2s"}
	d := newDrillOf(t, perRun, append(shared, "HERALD_ROLES=api,engine")...)
	workerEnv := append(slices.Clone(d.env[:len(d.env)-1]), "HERALD_ROLES=worker")
	workers := []*apptest.Process{
		apptest.StartProcess(t, t.TempDir(), workerEnv...),
		apptest.StartProcess(t, t.TempDir(), workerEnv...),
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control printed:\n%s", tail(d.p.Out.String(), 4000))
			for i, w := range workers {
				t.Logf("worker %d printed:\n%s", i+1, tail(w.Out.String(), 4000))
			}
		}
	})

	// A worker is ready once its consumers are set up, which a cluster still
	// electing its leaders can delay; both are to take part from the start.
	for _, w := range workers {
		waitFor(t, func() bool { code, _ := readyz(t, w.OpsURL); return code == 200 })
	}
	d.waitAccepted(d.mails() / 2)
	const sent = `herald_worker_deliveries_total{kind="email",result="sent"}`
	var byWorker []float64
	for i, w := range workers {
		n := scrape(t, w.OpsURL)[sent]
		if n == 0 {
			t.Errorf("worker %d had sent nothing by the time half the mails were in", i+1)
		}
		byWorker = append(byWorker, n)
	}
	workers[0].Kill()
	leader := streamLeader(t, cluster, "HERALD_DELIVERIES")
	for _, n := range cluster.Nodes {
		if n.Name == leader {
			n.Kill() // no clean hand-over of its leadership
		}
	}
	before, _ := d.counts()
	lost := time.Now()
	done := d.waitMails(d.mails(), 60*time.Second)
	d.waitFinal(30 * time.Second)
	distinct, dups := d.counts()
	t.Logf("worker 1 and %s killed after %d of %d mails (sent by the workers: %v); all %d arrived %s later, %d duplicates",
		leader, before, d.mails(), byWorker, distinct, done.Sub(lost).Round(time.Millisecond), dups)
	if dups > 8 {
		t.Errorf("%d duplicates, more than the killed worker's send slots (8)", dups)
	}
}

// streamLeader names the NATS server that leads stream.
func streamLeader(t *testing.T, cluster *apptest.NATSCluster, stream string) string {
	t.Helper()
	js := cluster.JetStream()
	defer js.Conn().Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream %s: %v", stream, err)
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
