package worker

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/heraldhq/herald/internal/clock"
)

// healer watches an embedded server's JetStream, which does not recover from
// a full disk by itself: a stream whose storage failed a write refuses every
// write after it until it is loaded again, and a server out of space may turn
// JetStream off. Once the store's disk takes a write again, the healer
// restarts JetStream (its state on disk kept) with the configuration it
// started with: publishing resumes without a restart of the process.
type healer struct {
	srv   *server.Server
	dir   string // the server's store folder, as its options name it
	log   *slog.Logger
	every time.Duration
	done  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	failed string // the storage's write error while not restarted since; "" when none
}

// startHealer watches srv, whose store is in dir, every every (default 2s)
// until stop.
func startHealer(srv *server.Server, dir string, log *slog.Logger, every time.Duration) *healer {
	h := &healer{srv: srv, dir: dir, log: log, every: every, done: make(chan struct{})}
	if h.every <= 0 {
		h.every = 2 * time.Second
	}
	h.wg.Go(h.watch)
	return h
}

// writeFailed is told of a write error of the store.
func (h *healer) writeFailed(msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == "" {
		h.failed = msg
	}
}

// sick says why JetStream takes no writes, or "" when nothing is known to stop it.
func (h *healer) sick() string {
	h.mu.Lock()
	failed := h.failed
	h.mu.Unlock()
	switch {
	case failed != "":
		return "JetStream's storage failed a write (" + failed + "); it restarts once the disk takes writes again"
	case !h.srv.JetStreamEnabled():
		return "JetStream is off: its storage ran out of space; it restarts once the disk takes writes again"
	}
	return ""
}

// watch heals JetStream every h.every, until stop.
func (h *healer) watch() {
	t := clock.Real().NewTicker(h.every) // the server's disk heals in real time
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C():
		}
		if h.sick() == "" {
			continue
		}
		if err := diskTakesWrites(h.dir); err != nil {
			h.log.Debug("JetStream's disk takes no writes yet", "err", err)
			continue
		}
		h.restart()
	}
}

// restart stops JetStream, if it is on, and starts it again from its state
// on disk, configured as the server's options configured it at start (the
// configuration JetStream reports holds the folder it derived from them).
func (h *healer) restart() {
	if h.srv.JetStreamEnabled() {
		if err := h.srv.ShutdownJetStream(); err != nil {
			h.log.Error("stop JetStream to restart it", "err", err)
			return
		}
	}
	if err := h.srv.EnableJetStream(&server.JetStreamConfig{StoreDir: h.dir}); err != nil {
		h.log.Error("restart JetStream", "err", err)
		return
	}
	h.mu.Lock()
	h.failed = ""
	h.mu.Unlock()
	h.log.Warn("JetStream restarted from its state on disk after its storage failed")
}

// diskTakesWrites writes, syncs and removes a 64 KiB file in dir.
func diskTakesWrites(dir string) error {
	f, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, 64<<10))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// stop ends the watch and waits for it.
func (h *healer) stop() {
	close(h.done)
	h.wg.Wait()
}
