package warehouse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/clock"
)

// checkpointTries bounds the checkpoints Checkpoint tries while a write
// transaction of the project is open.
const checkpointTries = 20

// Checkpoint writes every committed change of the project's database into
// its file, so that the file alone holds the project's data; a file that
// does not exist yet is left alone (os.ErrNotExist). Its caller keeps the
// project's writes away meanwhile (and until it has copied the file):
// DuckDB refuses a checkpoint while a write transaction is open, and
// Checkpoint tries again for a second before it gives up.
func (w *Warehouse) Checkpoint(ctx context.Context, pid string) error {
	if !validProject(pid) {
		return fmt.Errorf("warehouse: invalid project id %q", pid)
	}
	if _, err := os.Stat(w.Path(pid)); err != nil {
		return err
	}
	c, done, err := w.conn(ctx, pid)
	if err != nil {
		return err
	}
	defer done()
	for try := 1; ; try++ {
		_, err = c.ExecContext(ctx, "CHECKPOINT "+ident(catalog(pid)))
		if err == nil || try == checkpointTries || !strings.Contains(err.Error(), "other write transactions") {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clock.Real().After(50 * time.Millisecond): // DuckDB's writers end in real time
		}
	}
	if err != nil {
		return fmt.Errorf("checkpoint the warehouse of project %s: %s", pid, firstLine(err))
	}
	if _, err := os.Stat(w.Path(pid) + ".wal"); err == nil {
		return errors.New("warehouse: a checkpoint left a write-ahead log behind")
	}
	return nil
}
