package store

import (
	"context"
	"database/sql/driver"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/heraldhq/herald/internal/clock"
)

// The write-ahead log is copied into the database file (a checkpoint) every
// checkpointInterval by a connection of its own. Left to itself, SQLite
// checkpoints in the commit that takes the log past 1,000 pages, on the
// single writer's path: in a burst of 10,000 alerts that made every write
// behind it wait. The writer still checkpoints past writerCheckpointPages
// (64 MiB of log), should the checkpointer fall behind.
const (
	checkpointInterval    = time.Second
	writerCheckpointPages = 16384
)

// writerCacheKiB bounds the writer's page cache (SQLite's default is 2 MiB).
// A burst of 100,000 deliveries touches pages all over the indexes that are
// not in time order (the deliveries' by subscription, the subscriptions'
// states), and all over every index while run and delivery ids were random:
// more than 2 MiB hold, so the writer read them back from the file over and
// over. The cache grows only as far as the database does.
const writerCacheKiB = 64 << 10

// connector opens SQLite connections to dsn and runs the pragmas on each:
// those the driver's DSN has no parameter for. With a fence, every commit on
// its connections asks the fence first (see Store.Fence).
type connector struct {
	drv *sqlite3.SQLiteDriver
	dsn string
}

func newConnector(dsn string, f *fence, pragmas ...string) connector {
	return connector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		for _, p := range pragmas {
			if _, err := c.Exec(p, nil); err != nil {
				return err
			}
		}
		if f != nil {
			c.RegisterCommitHook(f.refuse)
		}
		return nil
	}}}
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// checkpoints runs a passive checkpoint (one that waits for no reader or
// writer) every checkpointInterval until Close.
func (s *Store) checkpoints() {
	t := clock.Real().NewTicker(checkpointInterval) // the log grows with the writes, on the machine's time
	defer t.Stop()
	for {
		select {
		case <-s.stopCheckpoints:
			return
		case <-t.C():
			// A failed checkpoint leaves the log to the next one, or to the writer's.
			_, _ = s.ck.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
}
