package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/replica"
	"github.com/heraldhq/herald/worker"
)

// replayBehind is how long before the restored database's point in time the
// outcomes of deliveries are recorded again at the start of a restored
// process: those its predecessor recorded after the replica's last sync, and
// those it took a while to record.
const replayBehind = time.Minute

// restoredState is what a control process restored at its start.
type restoredState struct {
	from       string
	db         *replica.Restored
	keys       []replica.RestoredKey
	warehouses []replica.RestoredWarehouse
}

// startReplica opens the replica's object store and starts the replicator,
// after restoring the key files into an empty data folder (the replicator
// restores the database). A folder that has a database must be the one that
// wrote the replica last.
func (a *App) startReplica(ctx context.Context, id string, me replica.Holder) error {
	target, err := parseReplicaURL(a.cfg.Replica.URL)
	if err != nil {
		return fmt.Errorf("replica.url: %w", err)
	}
	obs, err := worker.OpenReplicaStore(ctx, a.nats.JetStream(), a.log, target.Bucket, a.cfg.NATS.Replicas)
	if err != nil {
		return err
	}
	log := a.log.With("component", "replica")
	if a.snaps, err = replica.NewSnapshots(obs, filepath.Join(a.cfg.Data, "replica-tmp"), log); err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(a.cfg.Data, "herald.db"))
	empty := errors.Is(err, fs.ErrNotExist)
	if empty {
		if err := noWarehouses(a.cfg.Data); err != nil {
			return err
		}
		a.restored = &restoredState{from: a.cfg.Replica.URL}
		if a.restored.keys, err = a.snaps.RestoreKeys(ctx, a.keyFiles()); err != nil {
			return err
		}
	} else if err := a.checkWriter(ctx, id, target.Bucket); err != nil {
		return err
	}
	if err := a.lease.Check(); err != nil {
		return err
	}
	if err := a.snaps.SetWriter(ctx, replica.Writer{Folder: id, Name: me.Name, Since: time.Now().UTC()}); err != nil {
		return err
	}
	r, err := a.repl.begin(ctx, target, a.snaps, empty)
	if err != nil {
		return err
	}
	a.closers = append(a.closers, a.repl.stop)
	if empty {
		a.restored.db = r.Restored()
	}
	return nil
}

// noWarehouses refuses a data folder without a database that holds
// warehouses: restoring into it would mix two states.
func noWarehouses(dir string) error {
	found, _ := filepath.Glob(filepath.Join(dir, "warehouse", "*.duckdb"))
	if len(found) > 0 {
		return fmt.Errorf("data folder %s has no herald.db but holds warehouses (%s): move it away to restore the replica into an empty one",
			dir, filepath.Base(found[0]))
	}
	return nil
}

// checkWriter makes sure the data folder id wrote the replica last, or that
// the replica holds no database yet: a folder another process has since
// left behind would write its older state over the replica.
func (a *App) checkWriter(ctx context.Context, id, bucket string) error {
	w, ok, err := a.snaps.Writer(ctx)
	if err != nil {
		return err
	}
	if ok && w.Folder == id {
		return nil
	}
	if ok {
		return fmt.Errorf("replica.url: %s was last written by another data folder (%s, since %s), so this folder's state is "+
			"behind it: start on an empty data folder to restore the replica (docs/recovery.md)",
			bucket, w.Name, w.Since.Format(time.RFC3339))
	}
	has, err := a.snaps.HasDatabase(ctx)
	if err != nil {
		return err
	}
	if has {
		return fmt.Errorf("replica.url: %s holds a database this data folder did not write: start on an empty data folder "+
			"to restore it, or name an empty bucket (docs/recovery.md)", bucket)
	}
	return nil
}

// keyFiles are the key files kept in the data folder, by name: those the
// replica and a backup carry. A key configured elsewhere is the operator's.
func (a *App) keyFiles() map[string]string {
	out := map[string]string{}
	if a.cfg.Secrets.Key == "" {
		out["secret.key"] = filepath.Join(a.cfg.Data, "secret.key")
	}
	if a.cfg.Delivery.KeyFile == "" {
		out["delivery.key"] = filepath.Join(a.cfg.Data, "delivery.key")
	}
	return out
}

// restoreWarehouses puts the warehouse snapshots that match the restored
// database into the data folder, before the analytics open them, and says
// what was restored and from when.
func (a *App) restoreWarehouses(ctx context.Context) error {
	if a.restored == nil || a.restored.db == nil {
		if a.restored != nil {
			a.log.Info("the replica holds no database yet: a first start", "replica", a.restored.from)
		}
		return nil
	}
	versions, err := a.store.DataVersions(ctx)
	if err != nil {
		return err
	}
	dir := filepath.Join(a.cfg.Data, "warehouse")
	a.restored.warehouses, err = a.snaps.RestoreWarehouses(ctx, versions, func(pid string) string {
		return filepath.Join(dir, pid+".duckdb")
	})
	if err != nil {
		return err
	}
	for _, w := range a.restored.warehouses {
		if w.Version != w.Want {
			a.log.Warn("a project's warehouse was restored at another data version than its model: load its data again",
				"project", w.Project, "warehouse", w.Version, "model", w.Want)
		}
	}
	a.sayRestored()
	return nil
}

// sayRestored logs and prints what was restored and from when.
func (a *App) sayRestored() {
	r := a.restored
	var keys []string
	for _, k := range r.keys {
		keys = append(keys, k.Name)
	}
	a.log.Info("restored the control state from the replica", "replica", r.from, "databaseAsOf", r.db.At.UTC(),
		"transaction", r.db.TXID, "bytes", r.db.Bytes, "warehouses", len(r.warehouses), "keys", strings.Join(keys, ","))
	fmt.Fprintf(a.opt.Stdout, "Restored from %s: herald.db as of %s (transaction %d, %d bytes), the warehouses of %d projects, keys: %s\n",
		r.from, r.db.At.UTC().Format(time.RFC3339Nano), r.db.TXID, r.db.Bytes, len(r.warehouses), strings.Join(keys, ", "))
}

// replayResults records again the delivery outcomes of the time the
// restored database may have missed.
func (a *App) replayResults(ctx context.Context) error {
	if a.restored == nil || a.restored.db == nil {
		return nil
	}
	since := a.restored.db.At.Add(-replayBehind)
	var n int
	err := retryFor(ctx, replayWithin, a.log, "replaying the delivery outcomes", func() (err error) {
		n, err = a.relay.ReplayResults(ctx, since)
		return err
	})
	if err != nil {
		return err
	}
	a.log.Info("recorded again the delivery outcomes since before the restored point", "since", since.UTC(), "outcomes", n)
	return nil
}

// replayWithin bounds how long a restored process tries to replay the
// delivery outcomes: a cluster that just lost a machine may answer "no
// responders" while it elects the streams' leaders, and the replay is
// idempotent.
const replayWithin = time.Minute

// retryFor calls f until it succeeds, waiting from 250 ms up to 4 s between
// tries, for up to within; it returns f's last error then, or ctx's.
func retryFor(ctx context.Context, within time.Duration, log *slog.Logger, what string, f func() error) error {
	deadline := time.Now().Add(within)
	wait := 250 * time.Millisecond
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%s, tried for %v: %w", what, within, err)
		}
		log.Warn(what+" failed; trying again", "in", wait, "err", err)
		if !clock.Sleep(ctx, clock.Real(), wait) { // the cluster elects its leaders in real time
			return ctx.Err()
		}
		wait = min(2*wait, 4*time.Second)
	}
}

// replicatorRunner runs the replicator process and starts it again when it
// exits on its own; it stops it while the lease lapsed.
type replicatorRunner struct {
	a      *App
	folder string // this data folder's id

	mu     sync.Mutex
	target replicaTarget
	snaps  *replica.Snapshots
	r      *replica.Replicator // nil before begin
	paused bool                // the lease lapsed: no replicator until it is held again
	killed bool                // the lease is lost: no replicator any more
}

// begin starts the replicator for the first time.
func (rr *replicatorRunner) begin(ctx context.Context, target replicaTarget, snaps *replica.Snapshots,
	restore bool) (*replica.Replicator, error) {
	rr.mu.Lock()
	rr.target, rr.snaps = target, snaps
	rr.mu.Unlock()
	return rr.start(ctx, restore)
}

// command is the replicator process: this program's replicate command.
func (rr *replicatorRunner) command(restore bool) (*exec.Cmd, error) {
	exe := rr.a.opt.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("the replicator: %w", err)
		}
	}
	rr.mu.Lock()
	target := rr.target
	rr.mu.Unlock()
	cfg := replica.ReplicatorConfig{DB: filepath.Join(rr.a.cfg.Data, "herald.db"), Server: target.Server,
		Bucket: target.Bucket, SyncInterval: rr.a.cfg.Replica.SyncInterval, CredsFile: rr.a.cfg.NATS.CredsFile,
		CAFile: rr.a.cfg.NATS.CAFile, CertFile: rr.a.cfg.NATS.CertFile, KeyFile: rr.a.cfg.NATS.KeyFile, Restore: restore,
		ParentGoneWithin: replica.LeaseTTL / 4, LogLevel: rr.a.cfg.Log.Level, LogFormat: rr.a.cfg.Log.Format,
		Fenced: rr.a.lease != nil}
	cmd := exec.Command(exe, append([]string{"replicate"}, cfg.Args()...)...)
	cmd.Stderr = rr.a.opt.Stderr
	return cmd, nil
}

// start starts the replicator and waits until it is ready.
func (rr *replicatorRunner) start(ctx context.Context, restore bool) (*replica.Replicator, error) {
	cmd, err := rr.command(restore)
	if err != nil {
		return nil, err
	}
	var valid func() time.Time
	if rr.a.lease != nil {
		valid = rr.a.lease.ValidUntil
	}
	r, err := replica.StartReplicator(ctx, cmd, valid, rr.a.log.With("component", "replica"))
	if err != nil {
		return nil, err
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.paused || rr.killed { // the lease lapsed while it started
		r.Kill()
		return nil, errors.New("the control lease lapsed while the replicator started")
	}
	rr.r = r
	return r, nil
}

// pause kills the replicator until resume: the lease lapsed.
func (rr *replicatorRunner) pause() {
	rr.mu.Lock()
	rr.paused = true
	r := rr.r
	rr.mu.Unlock()
	if r != nil {
		r.Kill()
	}
}

// resume starts the replicator again once the lease is held again, if the
// replica's writer is still this data folder: another folder's process may
// have held the lease and written the replica meanwhile, and then this
// folder is behind it.
func (rr *replicatorRunner) resume(ctx context.Context) error {
	rr.mu.Lock()
	snaps, started := rr.snaps, rr.r != nil
	rr.paused = false
	rr.mu.Unlock()
	if snaps == nil {
		return nil // still starting: startReplica checks the writer
	}
	w, ok, err := snaps.Writer(ctx)
	if err != nil {
		return err
	}
	if !ok || w.Folder != rr.folder {
		return fmt.Errorf("the replica was written by another data folder (%s) while the lease lapsed", w.Name)
	}
	if !started {
		return nil
	}
	_, err = rr.start(ctx, false)
	return err
}

// current is the running replicator.
func (rr *replicatorRunner) current() *replica.Replicator {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.r
}

// supervise starts the replicator again when it exited on its own, looking
// every second until ctx ends; it leaves the running one to stop.
func (rr *replicatorRunner) supervise(ctx context.Context) error {
	t := rr.a.paced.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		rr.mu.Lock()
		r, idle := rr.r, rr.paused || rr.killed
		rr.mu.Unlock()
		if idle || r == nil || r.Check() == nil {
			continue // stopped on purpose, or running
		}
		rr.a.log.Error("the replicator exited; starting it again", "err", r.Err())
		if _, err := rr.start(ctx, false); err != nil && ctx.Err() == nil {
			rr.a.log.Error("the replicator did not start again", "err", err)
		}
	}
}

// stop asks the replicator to upload what it has not yet and stop: the
// store is closed by then.
func (rr *replicatorRunner) stop() error {
	rr.mu.Lock()
	r, idle := rr.r, rr.killed || rr.paused
	rr.mu.Unlock()
	if idle || r == nil || r.Check() != nil {
		return nil
	}
	if err := r.Stop(replica.StopWithin); err != nil {
		return err
	}
	rr.a.log.Info("the replicator stopped", "synced", r.Synced().UTC())
	return nil
}

// kill ends the replicator at once: this process lost the lease.
func (rr *replicatorRunner) kill() {
	rr.mu.Lock()
	rr.killed = true
	r := rr.r
	rr.mu.Unlock()
	if r != nil {
		r.Kill()
	}
}

// check is the readiness of replication: the replicator runs and its last
// upload is recent.
func (rr *replicatorRunner) check(context.Context) error {
	r := rr.current()
	if r == nil {
		return errors.New("the replicator has not started")
	}
	if err := r.Check(); err != nil {
		return err
	}
	if synced := r.Synced(); !synced.IsZero() && time.Since(synced) > replicaStale(rr.a.cfg.Replica.SyncInterval) {
		return fmt.Errorf("the replica last took the database at %s", synced.UTC().Format(time.RFC3339))
	}
	return nil
}

// replicaStale is how old the replica's last upload may be before readiness
// says so: a minute, or ten sync intervals.
func replicaStale(interval time.Duration) time.Duration { return max(time.Minute, 10*interval) }
