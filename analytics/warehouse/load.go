package warehouse

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
)

// Load modes: a full load replaces the table's rows; an incremental one adds rows and
// replaces those whose primary key is loaded again.
const (
	Full        = "full"
	Incremental = "incremental"
)

// LoadRequest is a CSV load into one table.
type LoadRequest struct {
	// Table is the table as synchronized.
	Table *ldm.Table
	// Columns name the table column of each CSV field, in file order (the header row).
	Columns []string
	// Data is the CSV after its header row: comma-separated, double quotes, UTF-8.
	Data io.Reader
	// Mode is Full or Incremental.
	Mode string
	// References are the reference columns to check against the keys they reference.
	References []Reference
}

// Reference is a reference column and the key it must find.
type Reference struct {
	Column string
	// Table and Key are the referenced table and its key column; empty for a date.
	Table, Key string
	// Dataset names the referenced dataset in errors.
	Dataset string
}

// RowError is a row of a CSV that cannot be loaded. Rows are counted with the header as
// row 1, so the first data row is row 2; Row 0 means the file as a whole.
type RowError struct {
	Row    int64
	Column string // empty when the row as a whole is wrong
	Msg    string
}

func (e *RowError) Error() string {
	if e.Row == 0 {
		return e.Msg
	}
	if e.Column == "" {
		return fmt.Sprintf("row %d: %s", e.Row, e.Msg)
	}
	return fmt.Sprintf("row %d, column %s: %s", e.Row, e.Column, e.Msg)
}

// maxRejects bounds the rejected rows a load keeps to report: without it, a body of bad
// rows is held whole, with each row's text, in the rejects table.
const maxRejects = 20

// firstDate is the earliest date a date dimension holds: element ids count days from it.
const firstDate = "1900-01-01"

// Load reads the CSV into a staging table beside the table, checks every row (types,
// VARCHAR lengths, primary key, references, dates) and then swaps the staging table in
// (full) or replaces and adds its rows (incremental), all inside a transaction that the
// returned Pending commits or rolls back. A bad row is a *RowError and leaves the table as
// it was.
func (w *Warehouse) Load(ctx context.Context, pid string, req LoadRequest) (*Pending, error) {
	if req.Mode != Full && req.Mode != Incremental {
		return nil, fmt.Errorf("load mode %q is not %s or %s", req.Mode, Full, Incremental)
	}
	path, err := w.spool(req)
	if err != nil {
		return nil, err
	}
	c, release, err := w.conn(ctx, pid)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	suffix := strings.TrimSuffix(filepath.Base(path), ".csv")
	l := &loader{conn: c, cat: ident(catalog(pid)), req: req, suffix: suffix}
	p := &Pending{l: l, path: path, release: release}
	if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		p.end()
		return nil, fmt.Errorf("load begin: %w", err)
	}
	p.open = true
	if p.Rows, err = l.run(ctx, path); err != nil {
		p.Rollback()
		return nil, err
	}
	return p, nil
}

// Pending is a load whose rows are written but not committed. Commit or Rollback must be
// called.
type Pending struct {
	// Rows is how many rows the load has.
	Rows    int64
	l       *loader
	path    string
	release func()
	open    bool
}

// Commit commits the load.
func (p *Pending) Commit() error {
	if !p.open {
		return errors.New("warehouse: load already ended")
	}
	defer p.end()
	if _, err := p.l.conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		_, _ = p.l.conn.ExecContext(context.Background(), "ROLLBACK")
		discard(p.l.conn)
		return fmt.Errorf("load commit: %w", err)
	}
	return nil
}

// Rollback undoes the load; after Commit it does nothing.
func (p *Pending) Rollback() error {
	if !p.open {
		return nil
	}
	defer p.end()
	if _, err := p.l.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		discard(p.l.conn)
		return fmt.Errorf("load rollback: %w", err)
	}
	return nil
}

// end drops the reader's reject tables, removes the spooled file and releases the
// connection. The staging table went with the transaction.
func (p *Pending) end() {
	p.open = false
	p.l.cleanup()
	os.Remove(p.path)
	p.release()
}

// spool writes the header and the streamed data to a temporary file for DuckDB's reader.
func (w *Warehouse) spool(req LoadRequest) (path string, err error) {
	f, err := os.CreateTemp(filepath.Join(w.dir, "tmp"), "load*.csv")
	if err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("load: %w", cerr)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	data := bufio.NewReaderSize(req.Data, 64<<10)
	bw.WriteString(strings.Join(req.Columns, ",") + lineEnd(data))
	if _, err := io.Copy(bw, data); err != nil {
		return "", fmt.Errorf("read CSV: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	return f.Name(), nil
}

// lineEnd returns the line end the data uses, "\r\n" or "\n", so that the header written
// before it matches: DuckDB's reader wants one kind in a file.
func lineEnd(data *bufio.Reader) string {
	head, _ := data.Peek(data.Size())
	if i := bytes.IndexByte(head, '\n'); i > 0 && head[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

type loader struct {
	conn   *sql.Conn
	cat    string
	req    LoadRequest
	suffix string // unique to the load
	base   int64  // rowid of the staging table's first row
}

// staging is the staging table: in the table's schema, named so that no dataset's table
// can have the name.
func (l *loader) staging() string {
	return l.cat + ".main." + ident(l.req.Table.Name+"."+l.suffix)
}

func (l *loader) rejects() string { return "rejects_" + l.suffix }
func (l *loader) scans() string   { return "scans_" + l.suffix }

func (l *loader) table() string { return l.cat + ".main." + ident(l.req.Table.Name) }

func (l *loader) cleanup() {
	for _, t := range []string{l.rejects(), l.scans()} {
		if _, err := l.conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS temp.main."+ident(t)); err != nil {
			discard(l.conn)
			return
		}
	}
}

// row converts a staging rowid to a row number.
func (l *loader) row(rowid int64) int64 { return rowid - l.base + 2 }

// run stages, checks and writes the rows inside the transaction.
func (l *loader) run(ctx context.Context, path string) (int64, error) {
	n, err := l.stage(ctx, path)
	if err != nil {
		return 0, err
	}
	for _, check := range []func(context.Context) error{l.checkKey, l.checkValues, l.checkReferences} {
		if err := check(ctx); err != nil {
			return 0, err
		}
	}
	return n, l.write(ctx)
}

// stage reads the file into the staging table, with the table's columns in its order
// (columns the CSV leaves out are empty). Rows keep the file's order, so rowids count
// them. The read stops at the first row it cannot convert, which firstBadRow then
// names: DuckDB's reader keeps what it rejects in memory, so it is asked to keep
// rejects only over a bounded head of the file.
func (l *loader) stage(ctx context.Context, path string) (int64, error) {
	if _, err := l.conn.ExecContext(ctx, "CREATE TABLE "+l.staging()+" AS "+l.readCSV(path, "")); err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("read CSV: %w", ctx.Err())
		}
		return 0, l.firstBadRow(ctx, path, err)
	}
	var n int64
	var base sql.NullInt64
	if err := l.conn.QueryRowContext(ctx, "SELECT count(*), min(rowid) FROM "+l.staging()).Scan(&n, &base); err != nil {
		return 0, fmt.Errorf("read CSV: %w", err)
	}
	l.base = base.Int64
	return n, nil
}

// readCSV is the query that reads the file as the table's rows; options are added to
// read_csv's.
func (l *loader) readCSV(path, options string) string {
	csvCols := make([]string, len(l.req.Columns))
	for i, name := range l.req.Columns {
		c, _ := l.req.Table.Column(name)
		csvCols[i] = literal(name) + ": " + literal(sqlType(c.Type))
	}
	sel := make([]string, len(l.req.Table.Columns))
	for i, c := range l.req.Table.Columns {
		sel[i] = ident(c.Name)
		if !l.loaded(c.Name) {
			sel[i] = "CAST(NULL AS " + sqlType(c.Type) + ") AS " + ident(c.Name)
		}
	}
	return "SELECT " + strings.Join(sel, ", ") + " FROM read_csv(" + literal(path) +
		", header = true, auto_detect = false, delim = ',', quote = '\"', escape = '\"', columns = {" +
		strings.Join(csvCols, ", ") + "}" + options + ")"
}

// probeBytes and probeLines bound the head of a file read again to find its first bad
// row: DuckDB holds every row it rejects in memory, whatever rejects_limit keeps.
const (
	probeBytes = 1 << 20
	probeLines = 2000
)

var csvErrorLine = regexp.MustCompile(`CSV Error on Line: ([0-9]+)`)

// firstBadRow names the first row of the file that cannot be loaded, after the strict
// read failed with readErr: it reads the head of the file again keeping at most
// maxRejects rejected rows. When the head is all good (the bad row is further on), the
// row is the one the strict read stopped at.
func (l *loader) firstBadRow(ctx context.Context, path string, readErr error) (err error) {
	// The failed read aborted the load's transaction: probe outside it, and begin it
	// again for the load's rollback.
	if _, err := l.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("read CSV: %s", firstLine(err))
	}
	defer func() {
		if _, berr := l.conn.ExecContext(context.WithoutCancel(ctx), "BEGIN TRANSACTION"); berr != nil {
			err = errors.Join(err, fmt.Errorf("load begin: %w", berr))
		}
	}()
	head, err := headOf(path, probeBytes, probeLines)
	if err != nil {
		return fmt.Errorf("read CSV: %w", err)
	}
	defer os.Remove(head)
	probe := "temp.main." + ident("probe_"+l.suffix)
	_, err = l.conn.ExecContext(ctx, "CREATE TEMP TABLE "+ident("probe_"+l.suffix)+" AS "+l.readCSV(head, ", store_rejects = true, rejects_limit = "+
		strconv.Itoa(maxRejects)+", rejects_table = "+literal(l.rejects())+", rejects_scan = "+literal(l.scans())))
	if err != nil {
		// The reader cannot make sense of the file at all (say, line ends of two kinds).
		return unreadable(readErr)
	}
	if _, err := l.conn.ExecContext(ctx, "DROP TABLE "+probe); err != nil {
		return fmt.Errorf("read CSV: %s", firstLine(err))
	}
	var line int64
	var column, kind, msg sql.NullString
	err = l.conn.QueryRowContext(ctx, "SELECT line, column_name, error_type, error_message FROM "+ident(l.rejects())+
		" ORDER BY line LIMIT 1").Scan(&line, &column, &kind, &msg)
	switch {
	case err == nil:
		return l.rejectError(line, column.String, kind.String, msg.String)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("read CSV rejects: %w", err)
	}
	return unreadable(readErr)
}

// unreadable is the RowError of a read that failed where the rejects could not tell
// which row is wrong: the row the reader's error names, if any.
func unreadable(readErr error) *RowError {
	e := &RowError{Msg: "the CSV cannot be read: " + strings.TrimPrefix(firstLine(readErr), "Invalid Input Error: ")}
	if m := csvErrorLine.FindStringSubmatch(readErr.Error()); m != nil {
		e.Row, _ = strconv.ParseInt(m[1], 10, 64)
		e.Msg = "the row cannot be loaded"
		if m := couldNotConvert.FindStringSubmatch(readErr.Error()); m != nil {
			e.Msg = fmt.Sprintf("%q cannot be converted", m[1])
		}
	}
	return e
}

// headOf copies the first lines of the file at path, at most max bytes and lines of
// them, to a file beside it and returns its path.
func headOf(path string, max int64, lines int) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(filepath.Dir(path), "head*.csv")
	if err != nil {
		return "", err
	}
	br := bufio.NewReaderSize(io.LimitReader(src, max), 64<<10)
	bw := bufio.NewWriterSize(dst, 64<<10)
	for n := 0; n <= lines; {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			bw.Write(line)
			continue
		}
		if err != nil {
			break // the last line may be cut by the limit: leave it out
		}
		bw.Write(line)
		n++
	}
	err = errors.Join(bw.Flush(), dst.Close())
	if err != nil {
		os.Remove(dst.Name())
		return "", err
	}
	return dst.Name(), nil
}

var couldNotConvert = regexp.MustCompile(`Could not convert string "(.*)" to`)

func (l *loader) rejectError(line int64, column, kind, msg string) *RowError {
	e := &RowError{Row: line, Column: column, Msg: msg}
	switch kind {
	case "CAST":
		c, _ := l.req.Table.Column(column)
		if m := couldNotConvert.FindStringSubmatch(msg); m != nil {
			e.Msg = fmt.Sprintf("%q is not a valid %s", m[1], c.Type)
		}
	case "MISSING COLUMNS", "TOO MANY COLUMNS":
		e.Column = ""
		found := "a different number of"
		if _, after, ok := strings.Cut(msg, "Found: "); ok {
			found = strings.TrimRightFunc(after, func(r rune) bool { return r < '0' || r > '9' })
		}
		e.Msg = fmt.Sprintf("the row has %s fields, the header has %d", found, len(l.req.Columns))
	case "INVALID ENCODING":
		e.Msg = "the text is not UTF-8"
	}
	return e
}

func (l *loader) loaded(column string) bool {
	for _, c := range l.req.Columns {
		if c == column {
			return true
		}
	}
	return false
}

// write swaps the staging table in (full) or replaces and adds rows (incremental), and
// numbers the new elements.
func (l *loader) write(ctx context.Context) error {
	if l.req.Mode == Full {
		if _, err := l.conn.ExecContext(ctx, "DROP TABLE "+l.table()); err != nil {
			return fmt.Errorf("load: replace table: %s", firstLine(err))
		}
		if _, err := l.conn.ExecContext(ctx, "ALTER TABLE "+l.staging()+" RENAME TO "+ident(l.req.Table.Name)); err != nil {
			return fmt.Errorf("load: replace table: %s", firstLine(err))
		}
	} else {
		if k := l.req.Table.Key; k != "" {
			if _, err := l.conn.ExecContext(ctx, "DELETE FROM "+l.table()+" WHERE "+ident(k)+" IN (SELECT "+ident(k)+" FROM "+l.staging()+")"); err != nil {
				return fmt.Errorf("load: replace rows: %s", firstLine(err))
			}
		}
		cols := make([]string, len(l.req.Table.Columns))
		for i, c := range l.req.Table.Columns {
			cols[i] = ident(c.Name)
		}
		list := strings.Join(cols, ", ")
		if _, err := l.conn.ExecContext(ctx, "INSERT INTO "+l.table()+" ("+list+") SELECT "+list+" FROM "+l.staging()); err != nil {
			return fmt.Errorf("load: insert: %s", firstLine(err))
		}
		if _, err := l.conn.ExecContext(ctx, "DROP TABLE "+l.staging()); err != nil {
			return fmt.Errorf("load: %s", firstLine(err))
		}
	}
	tx := &Tx{conn: l.conn, cat: l.cat}
	for _, c := range l.req.Table.Columns {
		if hasLookup(c) {
			if err := tx.fillLookup(ctx, l.req.Table.Name, c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}
