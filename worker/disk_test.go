package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/channeltest"
	"github.com/heraldhq/herald/store"
)

// smallDisk mounts a tmpfs of size bytes at a new folder and returns it,
// unmounted when the test ends; the test is skipped where it cannot mount
// one (mounting needs root, or CAP_SYS_ADMIN).
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs for a disk that fills (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file into dir until its disk is full and returns the
// function that removes it again.
func fill(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{64 << 10, 4 << 10, 512, 1} { // to the last byte
		chunk := make([]byte, size)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestJetStreamComesBackAfterItsDiskFilled: the embedded server's disk
// fills while deliveries are published; the server turns JetStream off,
// Check says so, and once space returns JetStream is on again, without a
// restart, and every delivery goes once.
func TestJetStreamComesBackAfterItsDiskFilled(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, 32<<20)
	e := newEnv(t)
	peer := channeltest.NewSMTPServer(t)
	ch := e.channel(peer.Channel())
	n, err := StartEmbedded(disk, EmbeddedConfig{HealEvery: 50 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	r := e.start(n, []channels.Sender{emailSender(t, peer.Host(), peer.Port())}, testConfig())
	<-r.idle // the streams exist
	free := fill(t, disk)
	var ids []string
	for i := range 20 {
		_, got := e.enqueue(store.Payload{Subject: fmt.Sprintf("Report %d", i), Text: "t"}, ch)
		ids = append(ids, got...)
	}
	r.relay.Notify()
	waitUntil(t, func() bool { return n.Check() != nil }, "JetStream to turn off on a full disk")
	free()
	waitUntil(t, func() bool { return n.Check() == nil }, "JetStream to come back")
	for range 3 { // the sweeps that follow publish the outbox
		r.sweep <- time.Now()
	}
	for _, id := range ids {
		r.await(t, id, outcomeSent)
	}
	for id, count := range messageIDs(peer.Messages()) {
		if count != 1 {
			t.Errorf("Message-ID %s received %d times", id, count)
		}
	}
}

// waitUntil polls cond until it holds, failing the test after testTimeout.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(testTimeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("waited in vain for %s", what)
		}
	}
}
