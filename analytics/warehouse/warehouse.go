package warehouse

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Options configure a Warehouse: the warehouse section, whose zero values
// take DefaultConfig's, and what the configuration does not set.
type Options struct {
	Config
	// MaxIdle is how many project databases stay attached while nobody uses them. Default 64.
	MaxIdle int
}

// ErrClosed is returned by a closed Warehouse.
var ErrClosed = errors.New("warehouse: closed")

// Warehouse is the DuckDB side of every project of a data folder.
type Warehouse struct {
	dir     string
	db      *sql.DB
	maxIdle int

	mu       sync.Mutex
	closed   bool
	tick     uint64
	attached map[string]*attachment
}

// attachment is one attached project database.
type attachment struct {
	refs  int
	used  uint64        // tick of the last release, for least-recently-used detaching
	ready chan struct{} // closed once ATTACH finished; err is its outcome
	err   error
	gone  chan struct{} // set while DETACH runs, closed when it is done
}

// Open opens the warehouse kept in dir, creating the folder if needed. What a previous
// process left in its temporary folder (the spooled CSV of a load it did not finish,
// DuckDB's spill files) is removed.
func Open(ctx context.Context, dir string, opt Options) (*Warehouse, error) {
	opt.Config = opt.withDefaults()
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("open warehouse: clear %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("open warehouse: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open warehouse: %w", err)
	}
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("open warehouse: %w", err)
	}
	db := sql.OpenDB(conn)
	settings := []string{
		"SET GLOBAL temp_directory = " + literal(filepath.Join(abs, "tmp")),
		"SET GLOBAL preserve_insertion_order = true",
		"SET GLOBAL autoinstall_known_extensions = false",
		"SET GLOBAL autoload_known_extensions = false",
		"SET GLOBAL allowed_directories = [" + literal(abs+string(filepath.Separator)) + "]",
		"SET GLOBAL enable_external_access = false",
	}
	if opt.Threads > 0 {
		settings = append(settings, "SET GLOBAL threads = "+strconv.Itoa(opt.Threads))
	}
	settings = append(settings, "SET GLOBAL memory_limit = "+literal(opt.MemoryLimit))
	settings = append(settings, "SET GLOBAL lock_configuration = true")
	for _, s := range settings {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("open warehouse: %s: %w", s, err)
		}
	}
	w := &Warehouse{dir: abs, db: db, maxIdle: opt.MaxIdle, attached: map[string]*attachment{}}
	if w.maxIdle <= 0 {
		w.maxIdle = 64
	}
	return w, nil
}

// Close detaches every project database and closes DuckDB. Nothing may use the warehouse
// any more.
func (w *Warehouse) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	return w.db.Close()
}

// validProject reports whether pid can name a database file and a catalog.
func validProject(pid string) bool {
	if pid == "" || len(pid) > 64 {
		return false
	}
	for _, r := range pid {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// catalog is the name the project's database is attached under.
func catalog(pid string) string { return "p_" + pid }

// Path is the database file of the project.
func (w *Warehouse) Path(pid string) string { return filepath.Join(w.dir, pid+".duckdb") }

// acquire attaches the project's database if needed and keeps it attached until release
// is called.
func (w *Warehouse) acquire(ctx context.Context, pid string) (release func(), err error) {
	if !validProject(pid) {
		return nil, fmt.Errorf("warehouse: invalid project id %q", pid)
	}
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return nil, ErrClosed
		}
		a := w.attached[pid]
		if a != nil && a.gone != nil {
			gone := a.gone
			w.mu.Unlock()
			select {
			case <-gone:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if a == nil {
			a = &attachment{ready: make(chan struct{})}
			w.attached[pid] = a
			a.refs++
			w.mu.Unlock()
			a.err = w.attach(ctx, pid)
			close(a.ready)
		} else {
			a.refs++
			w.mu.Unlock()
			<-a.ready
		}
		if a.err != nil {
			w.mu.Lock()
			a.refs--
			if w.attached[pid] == a && a.refs == 0 {
				delete(w.attached, pid)
			}
			w.mu.Unlock()
			return nil, a.err
		}
		return func() { w.release(a) }, nil
	}
}

func (w *Warehouse) attach(ctx context.Context, pid string) error {
	cat := ident(catalog(pid))
	if _, err := w.db.ExecContext(ctx, "ATTACH IF NOT EXISTS "+literal(w.Path(pid))+" AS "+cat); err != nil {
		return fmt.Errorf("attach warehouse of project %s: %w", pid, err)
	}
	if _, err := w.db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+cat+".herald"); err != nil {
		return fmt.Errorf("prepare warehouse of project %s: %w", pid, err)
	}
	return nil
}

// release ends a use of an attachment and detaches the least recently used idle databases
// beyond MaxIdle.
func (w *Warehouse) release(a *attachment) {
	w.mu.Lock()
	a.refs--
	w.tick++
	a.used = w.tick
	var victims []string
	idle := 0
	for _, x := range w.attached {
		if x.refs == 0 && x.gone == nil {
			idle++
		}
	}
	for idle > w.maxIdle {
		pid, oldest := "", uint64(0)
		for p, x := range w.attached {
			if x.refs == 0 && x.gone == nil && (pid == "" || x.used < oldest) {
				pid, oldest = p, x.used
			}
		}
		w.attached[pid].gone = make(chan struct{})
		victims = append(victims, pid)
		idle--
	}
	closed := w.closed
	w.mu.Unlock()
	for _, pid := range victims {
		if !closed {
			// A failed DETACH leaves the database attached; the next ATTACH IF NOT EXISTS
			// finds it so.
			_, _ = w.db.ExecContext(context.Background(), "DETACH DATABASE IF EXISTS "+ident(catalog(pid)))
		}
		w.mu.Lock()
		x := w.attached[pid]
		delete(w.attached, pid)
		close(x.gone)
		w.mu.Unlock()
	}
}

// conn pins a connection with the project's database attached.
func (w *Warehouse) conn(ctx context.Context, pid string) (*sql.Conn, func(), error) {
	release, err := w.acquire(ctx, pid)
	if err != nil {
		return nil, nil, err
	}
	c, err := w.db.Conn(ctx)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("warehouse connection: %w", err)
	}
	return c, func() { c.Close(); release() }, nil
}

// discard makes the pool drop the connection instead of reusing it.
func discard(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
}

// ident quotes a SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// literal quotes a SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// firstLine is the first line of a DuckDB error, without the hints that follow it.
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
