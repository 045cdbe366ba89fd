package replica

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
	lsnats "github.com/benbjohnson/litestream/nats"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/clock"
)

// ReplicatorConfig is what the replicator process is told: the database, the
// object store to replicate it into, and how.
type ReplicatorConfig struct {
	// DB is the path of the SQLite database.
	DB string
	// Server is the NATS server to connect to, nats://host:port.
	Server string
	// Bucket is the object store.
	Bucket string
	// SyncInterval bounds how old the newest commit missing from the replica
	// may be: the database is read, and what it read uploaded, every half of it.
	SyncInterval time.Duration
	// CredsFile, CAFile, CertFile and KeyFile authenticate to the server.
	CredsFile, CAFile, CertFile, KeyFile string
	// Restore says to restore the database from the replica first when the
	// database does not exist.
	Restore bool
	// ParentGoneWithin bounds the last upload when the control process went
	// away without asking the replicator to stop: it must end while the
	// control process's lease is still valid.
	ParentGoneWithin time.Duration
	// LogLevel and LogFormat are the control process's log.level and log.format.
	LogLevel, LogFormat string
	// Fenced says that the control process tells the replicator, on its
	// standard input, until when it holds the control lease: the replicator
	// writes nothing into the replica before it was told, nor past it.
	Fenced bool
}

// StopWithin bounds the last upload when the control process asks the
// replicator to stop (it holds the lease meanwhile), and so how long it
// waits for the replicator to exit before it kills it.
const StopWithin = 30 * time.Second

// Args are the command-line arguments of the replicator that ParseReplicatorArgs reads.
func (c ReplicatorConfig) Args() []string {
	args := []string{"--db", c.DB, "--server", c.Server, "--bucket", c.Bucket,
		"--sync-interval", c.SyncInterval.String(), "--parent-gone-within", c.ParentGoneWithin.String()}
	for _, f := range []struct{ name, v string }{{"creds", c.CredsFile}, {"ca", c.CAFile}, {"cert", c.CertFile}, {"key", c.KeyFile}} {
		if f.v != "" {
			args = append(args, "--"+f.name, f.v)
		}
	}
	if c.Restore {
		args = append(args, "--restore")
	}
	if c.Fenced {
		args = append(args, "--fenced")
	}
	if c.LogLevel != "" {
		args = append(args, "--log-level", c.LogLevel)
	}
	if c.LogFormat != "" {
		args = append(args, "--log-format", c.LogFormat)
	}
	return args
}

// ParseReplicatorArgs reads the arguments Args writes.
func ParseReplicatorArgs(args []string, stderr io.Writer) (ReplicatorConfig, error) {
	var c ReplicatorConfig
	fs := flag.NewFlagSet("replicate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.DB, "db", "", "the SQLite database")
	fs.StringVar(&c.Server, "server", "", "the NATS server, nats://host:port")
	fs.StringVar(&c.Bucket, "bucket", "", "the object store")
	fs.DurationVar(&c.SyncInterval, "sync-interval", time.Second, "the recovery point")
	fs.DurationVar(&c.ParentGoneWithin, "parent-gone-within", LeaseTTL/4, "the last upload's bound once the control process is gone")
	fs.StringVar(&c.CredsFile, "creds", "", "NATS credentials file")
	fs.StringVar(&c.CAFile, "ca", "", "certificates of the servers' CA")
	fs.StringVar(&c.CertFile, "cert", "", "client certificate")
	fs.StringVar(&c.KeyFile, "key", "", "client key")
	fs.BoolVar(&c.Restore, "restore", false, "restore the database first when it does not exist")
	fs.BoolVar(&c.Fenced, "fenced", false, "write into the replica only within the lease validity given on standard input")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.DB == "" || c.Server == "" || c.Bucket == "":
		return c, errors.New("replicate: --db, --server and --bucket are required")
	case c.SyncInterval < 100*time.Millisecond || c.ParentGoneWithin <= 0:
		return c, errors.New("replicate: --sync-interval must be at least 100ms and --parent-gone-within above zero")
	}
	return c, nil
}

// Restored is what the replicator restored: the database as of a point in time.
type Restored struct {
	// TXID is the last transaction of the restored database in the replica.
	TXID uint64 `json:"txid"`
	// At is when the replica took that transaction: no commit after it is in
	// the restored database.
	At time.Time `json:"at"`
	// Bytes is the size of the restored database.
	Bytes int64 `json:"bytes"`
}

// report is one line the replicator writes to the control process.
type report struct {
	// Ready is set on the first line: the database is restored, or there was
	// nothing to restore, and replication is starting.
	Ready    bool      `json:"ready,omitempty"`
	Restored *Restored `json:"restored,omitempty"`
	// TXID is the last transaction in the replica.
	TXID uint64 `json:"txid,omitempty"`
	// Synced is when the replica last took what the database had.
	Synced time.Time `json:"synced,omitzero"`
	// Checkpoints counts the checkpoints the replicator made of the database.
	Checkpoints int64 `json:"checkpoints,omitempty"`
	// Err is a failure: on the first line, the replicator gives up.
	Err string `json:"err,omitempty"`
}

// RunReplicator is the replicator process: it restores the database first if
// asked to and it does not exist, says so on out, and replicates it until the
// control process writes "stop" on in (the last upload may then take up to
// 30 s) or goes away (in ends, or ctx ends: then it has ParentGoneWithin).
// It writes a report line on out every sync interval. Fenced, it writes
// into the replica only within the lease validity the control process last
// wrote on in ("valid <Unix nanoseconds>"), and not before the first.
func RunReplicator(ctx context.Context, cfg ReplicatorConfig, in io.Reader, out io.Writer, log *slog.Logger) error {
	w := &reporter{out: out}
	client := natsClient(cfg, log)
	var restored *Restored
	if cfg.Restore {
		var err error
		if restored, err = restoreIfMissing(ctx, cfg.DB, client, log); err != nil {
			w.write(report{Err: err.Error()})
			return err
		}
	}
	var target litestream.ReplicaClient = client
	var fence *fencedClient
	if cfg.Fenced {
		fence = &fencedClient{ReplicaClient: client}
		target = fence
	}
	stopped := make(chan bool, 1) // true: asked to stop; false: the control process is gone
	told := make(chan struct{})   // closed at the first validity, or the input's end
	go readInput(in, fence, stopped, told)
	if cfg.Fenced {
		select { // nothing is written before the control process said until when
		case <-told:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	db := litestream.NewDB(cfg.DB)
	db.MonitorInterval = cfg.SyncInterval / 2
	db.Logger = log.With("db", "herald.db")
	rep := litestream.NewReplicaWithClient(db, target)
	rep.SyncInterval = cfg.SyncInterval / 2
	db.Replica = rep
	s := litestream.NewStore([]*litestream.DB{db}, litestream.DefaultCompactionLevels)
	s.Logger = log
	if err := s.Open(ctx); err != nil {
		w.write(report{Err: err.Error()})
		return fmt.Errorf("replicate: %w", err)
	}
	w.write(report{Ready: true, Restored: restored})

	tick := clock.Real().NewTicker(cfg.SyncInterval) // a process of its own, on the machine's time
	defer tick.Stop()
	var synced time.Time
	asked := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case asked = <-stopped:
			break loop
		case <-tick.C():
			synced = syncedUpTo(ctx, db, rep, cfg.SyncInterval, synced)
			w.write(report{TXID: uint64(rep.Pos().TXID), Synced: synced, Checkpoints: checkpoints()})
		}
	}
	made := checkpoints() // Close forgets them
	within := cfg.ParentGoneWithin
	if asked {
		within = StopWithin
	}
	s.SetShutdownSyncTimeout(within)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), within)
	defer cancel()
	// Close uploads what is new only once the database was opened, which
	// its first read does: a database made since the last tick is read now.
	began := time.Now()
	readErr := db.Sync(cctx)
	err := s.Close(cctx)
	if readErr == nil && err == nil {
		synced = began // Close uploaded all that read took
	}
	w.write(report{TXID: uint64(rep.Pos().TXID), Synced: synced, Checkpoints: made})
	if err != nil {
		return fmt.Errorf("replicate: the last upload: %w", err)
	}
	return nil
}

// readInput reads the control process's lines until its input ends: each
// validity goes to fence (told is closed at the first), a stop is handed
// on to stopped; its end, without a stop before, too.
func readInput(in io.Reader, fence *fencedClient, stopped chan<- bool, told chan<- struct{}) {
	var once sync.Once
	tell := func() { once.Do(func() { close(told) }) }
	defer tell()
	sc := bufio.NewScanner(in)
	asked := false
	for sc.Scan() {
		line := sc.Text()
		if n, ok := parseValid(line); ok {
			if fence != nil {
				fence.until.Store(n)
				tell()
			}
			continue
		}
		if strings.TrimSpace(line) == "stop" && !asked {
			asked = true
			stopped <- true
		}
	}
	if !asked {
		stopped <- false
	}
}

// natsClient is Litestream's client of the object store, its listings
// bounded (boundedListing).
func natsClient(cfg ReplicatorConfig, log *slog.Logger) litestream.ReplicaClient {
	c := lsnats.NewReplicaClient()
	c.SetLogger(log)
	c.URL, c.BucketName, c.Creds = cfg.Server, cfg.Bucket, cfg.CredsFile
	c.ReconnectWait = 250 * time.Millisecond
	if cfg.CAFile != "" {
		c.RootCAs = []string{cfg.CAFile}
	}
	c.ClientCert, c.ClientKey = cfg.CertFile, cfg.KeyFile
	return boundedListing{c, log}
}

// restoreIfMissing restores the database at path from the replica when it
// does not exist and the replica holds one, and says what it restored; nil
// when there was nothing to do.
func restoreIfMissing(ctx context.Context, path string, client litestream.ReplicaClient, log *slog.Logger) (*Restored, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := client.Init(ctx); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	plan, err := litestream.CalcRestorePlan(ctx, client, 0, time.Time{}, log)
	if err != nil || len(plan) == 0 {
		if err == nil || errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) {
			return nil, nil // an empty replica: a first start
		}
		empty, lerr := replicaEmpty(ctx, client)
		if lerr == nil && empty {
			return nil, nil
		}
		return nil, fmt.Errorf("restore: %w", err)
	}
	last := plan[len(plan)-1]
	opt := litestream.NewRestoreOptions()
	opt.OutputPath, opt.IntegrityCheck = path, litestream.IntegrityCheckQuick
	if err := litestream.NewReplicaWithClient(nil, client).Restore(ctx, opt); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return &Restored{TXID: uint64(last.MaxTXID), At: last.CreatedAt, Bytes: fi.Size()}, nil
}

// replicaEmpty reports whether the replica holds no file of any level.
func replicaEmpty(ctx context.Context, client litestream.ReplicaClient) (bool, error) {
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		it, err := client.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return false, err
		}
		any := it.Next()
		if err := it.Close(); err != nil {
			return false, err
		}
		if any {
			return false, nil
		}
	}
	return true, nil
}

// syncedUpTo is when the replica last held every commit of the database:
// the start of a read of the database all of which the replica took. It
// reads the database and uploads what is new, within d, and returns that
// read's start once the replica holds it all, else last. Litestream's
// LastSuccessfulSyncAt is no such point: an upload round that found no new
// file of the database's succeeds, though commits since its last read of
// the database (every half sync interval, later under load) are in no file
// yet.
func syncedUpTo(ctx context.Context, db *litestream.DB, rep *litestream.Replica, d time.Duration, last time.Time) time.Time {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	began := time.Now()
	if err := db.Sync(ctx); err != nil {
		return last
	}
	pos, err := db.Pos()
	if err != nil || pos.IsZero() {
		return last // no database yet, or none read
	}
	if rep.Pos().TXID < pos.TXID {
		if err := rep.Sync(ctx); err != nil || rep.Pos().TXID < pos.TXID {
			return last
		}
	}
	return began
}

// checkpoints is how many checkpoints Litestream made in this process, as
// its metrics count them.
func checkpoints() int64 {
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return 0
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "litestream_checkpoint_count" {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return int64(n)
}

// reporter writes report lines, one at a time.
type reporter struct {
	mu  sync.Mutex
	out io.Writer
}

func (r *reporter) write(rep report) {
	data, err := json.Marshal(rep)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.out.Write(append(data, '\n'))
}
