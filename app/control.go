package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/internal/logging"
	"github.com/heraldhq/herald/internal/startstop"
	"github.com/heraldhq/herald/replica"
	"github.com/heraldhq/herald/worker"
)

// folderIDFile holds the id of a data folder. No backup or replica carries
// it: a restored folder is another folder.
const folderIDFile = "herald.id"

// folderID returns the id of the data folder dir, making one on its first
// use. The lease and the replica tell this folder's processes from others'
// by it: the process holding the folder's lock knows that an earlier process
// of the same folder is gone.
func folderID(dir string) (string, error) {
	path := filepath.Join(dir, folderIDFile)
	data, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(data))) >= 16 {
		return strings.TrimSpace(string(data)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("data folder id: %w", err)
	}
	id := strings.ToLower(rand.Text())
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("data folder id: %w", err)
	}
	return id, nil
}

// fenced reports whether the control process shares its NATS cluster with
// others that could be control processes too: then it holds the lease.
func (c *Config) fenced() bool { return c.control() && c.NATS.URL != "" }

// takeControl makes this process the one control process of its NATS
// cluster: it waits for the control lease, serving /readyz meanwhile, and
// keeps renewing it. With a replica, it then restores an empty data folder
// and starts the replicator. It does nothing for a process on an embedded
// NATS server, which no other process shares.
func (a *App) takeControl(ctx context.Context) error {
	if !a.cfg.fenced() {
		return nil
	}
	id, err := folderID(a.cfg.Data)
	if err != nil {
		return err
	}
	kv, err := worker.OpenControlBucket(ctx, a.nats.JetStream(), a.log, worker.DefaultControlBucket, a.cfg.NATS.Replicas,
		replica.LeaseTTL)
	if err != nil {
		return err
	}
	me := a.holder(id)
	a.lease = replica.NewLease(kv, me, replica.LeaseTTL, a.log.With("component", "lease"))
	if err := a.listenOps(); err != nil {
		return err
	}
	a.serveOps(ctx)
	if err := a.waitForLease(ctx); err != nil {
		return err
	}
	if a.cfg.Replica.URL != "" {
		a.repl = &replicatorRunner{a: a, folder: id}
	}
	// The lease is kept until the store has closed: its own unit, stopped
	// by close, not by Run.
	keeper := startstop.New(a.log)
	_ = keeper.Start(ctx, startstop.Unit{Name: "control lease", Run: func(ctx context.Context) error {
		err := a.lease.Keep(ctx, replica.KeepHooks{Lapsed: a.leaseLapsed, Regained: a.leaseRegained})
		if err != nil {
			a.log.Error("this process lost the control lease: it fires and writes nothing from now on", "err", err)
		}
		return nil
	}})
	a.closers = append(a.closers, func() error {
		_ = keeper.Stop()
		rctx, cancel := context.WithTimeout(context.Background(), replica.LeaseTTL)
		defer cancel()
		if err := a.lease.Release(rctx); err != nil {
			// It lapses by itself within its term.
			a.log.Warn("the control lease was not released; it lapses by itself", "within", replica.LeaseTTL, "err", err)
			return nil
		}
		a.log.Info("released the control lease")
		return nil
	})
	if a.cfg.Replica.URL == "" {
		return nil
	}
	return a.startReplica(ctx, id, me)
}

// holder is this process as the lease names it.
func (a *App) holder(folder string) replica.Holder {
	host, _ := os.Hostname()
	return replica.Holder{Name: fmt.Sprintf("%s pid %d (api %s, data %s)", host, os.Getpid(), a.cfg.Listen, a.cfg.Data),
		Folder: folder, Incarnation: strings.ToLower(rand.Text())}
}

// waitForLease returns once this process holds the control lease, saying
// who holds it while it waits.
func (a *App) waitForLease(ctx context.Context) error {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	said := make(chan struct{})
	go func() {
		defer close(said)
		t := a.paced.NewTimer(replica.LeaseTTL / 10)
		defer t.Stop()
		select {
		case <-waitCtx.Done():
		case <-t.C():
			fmt.Fprintf(a.opt.Stdout, "Waiting for the control lease: %v\n", a.lease.Check())
		}
	}()
	began := time.Now()
	err := a.lease.Acquire(ctx)
	cancel()
	<-said
	if err != nil {
		return fmt.Errorf("control lease: %w", err)
	}
	a.log.Info("took the control lease", "waited", time.Since(began).Round(time.Millisecond))
	return nil
}

// leaseLapsed is told that the lease lapsed: the store's fence refuses every
// commit already; the replicator stops at once, so that nothing of this
// process reaches the replica while another could hold the lease.
func (a *App) leaseLapsed(err error) {
	a.log.Error("the control lease lapsed: firing and writing wait until this process holds it again", "err", err)
	if a.repl != nil {
		a.repl.pause()
	}
}

// leaseRegained is told that the lease is held again after it lapsed: with
// a replica, if no other data folder wrote it meanwhile, replication goes on.
func (a *App) leaseRegained(ctx context.Context, recreated bool) error {
	if a.repl != nil {
		if err := a.repl.resume(ctx); err != nil {
			return err
		}
	}
	a.log.Info("holds the control lease again: firing and writing go on", "recreated", recreated)
	return nil
}

// leaseLost is closed once this process lost the control lease; nil (never)
// without one.
func (a *App) leaseLost() <-chan struct{} {
	if a.lease == nil {
		return nil
	}
	return a.lease.Lost()
}

// loseControl is what a process does that lost the control lease: its store
// refuses every commit already (the fence), so no fire is claimed and
// nothing written; the replicator is killed at once, since the replica is
// the next holder's now; and the process stops, with the error.
func (a *App) loseControl() error {
	err := a.lease.Check()
	a.log.Error("stopping at once: this process lost the control lease, and another control process may hold it now", "err", err)
	if a.repl != nil {
		a.repl.kill()
	}
	return err
}

// replicaParts are the background parts of replication: the snapshots of
// the warehouses and the replicator's supervision. They start first and stop
// last.
func (a *App) replicaParts() []startstop.Unit {
	var units []startstop.Unit
	if a.repl != nil {
		units = append(units, startstop.Unit{Name: "replicator", Run: a.repl.supervise})
	}
	if a.snaps != nil {
		units = append(units, startstop.Unit{Name: "snapshots", Run: func(ctx context.Context) error {
			return a.snaps.Run(ctx, a.cfg.Replica.SyncInterval, a.store.DataVersions, a.md)
		}})
	}
	return units
}

// startSnapshots puts the key files into the replica, now that the process
// has read them (a rotated key is there before anything sealed with it is
// replicated), and learns which warehouse snapshots the replica holds.
func (a *App) startSnapshots(ctx context.Context) error {
	if a.snaps == nil {
		return nil
	}
	keys := a.keyFiles()
	for name, path := range keys {
		if _, err := os.Stat(path); err != nil {
			delete(keys, name)
		}
	}
	if err := a.snaps.PutKeys(ctx, keys); err != nil {
		return err
	}
	return a.snaps.Load(ctx)
}

// Replicate is the replicator process a control process with a replica
// starts (herald replicate, with the arguments it gives): Litestream, in a
// process of its own, since its SQLite library and Herald's do not see each
// other's locks in one process. It returns the exit code.
func Replicate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := replica.ParseReplicatorArgs(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	log := logging.New(logging.Config{Level: cfg.LogLevel, Format: cfg.LogFormat}, stderr).With("component", "replicator")
	slog.SetDefault(log) // Litestream logs through it
	done := make(chan error, 1)
	go func() { done <- replica.RunReplicator(ctx, cfg, stdin, stdout, log) }()
	var err2 error
	select {
	case err2 = <-done:
	case <-ctx.Done():
		// The control process is gone: the last upload has its bound, and
		// then the process ends whatever Litestream does.
		select {
		case err2 = <-done:
		case <-clock.Real().After(cfg.ParentGoneWithin + time.Second): // Litestream ends in real time
			err2 = errors.New("the last upload did not end in time")
		}
	}
	if err2 != nil {
		log.Error("replicator", "err", err2)
		return 1
	}
	return 0
}
