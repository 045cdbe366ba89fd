package store

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/mattn/go-sqlite3"
)

// ErrFenced is the error of a write the store's fence refused: the process
// may no longer write (it lost the control lease to another process).
var ErrFenced = errors.New("the store is fenced: this process may not write")

// fence decides, at every commit of the writer connection, whether the
// commit may happen. A commit it refuses is rolled back by SQLite.
type fence struct {
	check atomic.Pointer[func() error]
	// why is the last reason a commit was refused.
	why atomic.Pointer[error]
}

// Fence makes every later commit of the store ask check first: while check
// returns an error, each commit (a transaction or a single statement) is
// rolled back instead and the write fails: a transaction with an error
// wrapping ErrFenced and check's error, a single statement with SQLite's
// error of the refused commit. It is asked inside SQLite's commit, so no write can
// commit once check says no, whichever part of the process writes. A nil
// check lifts the fence.
func (s *Store) Fence(check func() error) {
	if check == nil {
		s.fence.check.Store(nil)
		return
	}
	s.fence.check.Store(&check)
}

// refuse is SQLite's commit hook: non-zero turns the commit into a rollback.
func (f *fence) refuse() int {
	check := f.check.Load()
	if check == nil {
		return 0
	}
	if err := (*check)(); err != nil {
		f.why.Store(&err)
		return 1
	}
	return 0
}

// explain turns the error of a commit the fence refused into one that says
// so; other errors pass as they are.
func (f *fence) explain(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) || se.ExtendedCode != sqlite3.ErrConstraintCommitHook {
		return err
	}
	if why := f.why.Load(); why != nil {
		return fmt.Errorf("%w: %w", ErrFenced, *why)
	}
	return ErrFenced
}
