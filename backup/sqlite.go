package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// CopySQLite copies the SQLite database at src into the new file dst with
// SQLite's online backup: one read transaction of src, so a consistent copy
// while its writers go on.
func CopySQLite(ctx context.Context, src, dst string) error {
	from, err := sql.Open("sqlite3", "file:"+src+"?_busy_timeout=5000")
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := sql.Open("sqlite3", "file:"+dst)
	if err != nil {
		return err
	}
	defer to.Close()
	fc, err := from.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer fc.Close()
	tc, err := to.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", dst, err)
	}
	defer tc.Close()
	return tc.Raw(func(d any) error {
		return fc.Raw(func(s any) error {
			dc, ok1 := d.(*sqlite3.SQLiteConn)
			sc, ok2 := s.(*sqlite3.SQLiteConn)
			if !ok1 || !ok2 {
				return errors.New("backup: not a SQLite connection")
			}
			bk, err := dc.Backup("main", sc, "main")
			if err != nil {
				return fmt.Errorf("backup of %s: %w", src, err)
			}
			done, err := bk.Step(-1)
			if err = errors.Join(err, bk.Finish()); err != nil {
				return fmt.Errorf("backup of %s: %w", src, err)
			}
			if !done {
				return fmt.Errorf("backup of %s: not done in one step", src)
			}
			return nil
		})
	})
}

// DataVersions reads the data version of every project from the database
// at path: what its warehouses must match.
func DataVersions(ctx context.Context, path string) (map[string]int64, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT project_id, data_version FROM project_models`)
	if err != nil {
		return nil, fmt.Errorf("data versions of %s: %w", path, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		out[id] = v
	}
	return out, rows.Err()
}

// integrity runs PRAGMA integrity_check on the database at path.
func integrity(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("PRAGMA integrity_check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("PRAGMA integrity_check: %s", res)
	}
	return nil
}
