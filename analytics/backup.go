package analytics

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
)

// Hold keeps every change of the projects pids (data loads, model changes,
// imports) waiting until release is called, so that their warehouses and the
// store can be copied in step. Reads go on.
func (s *Service) Hold(ctx context.Context, pids []string) (release func(), err error) {
	pids = slices.Clone(pids)
	slices.Sort(pids) // one order for every holder of several
	pids = slices.Compact(pids)
	var unlocks []func()
	release = func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, pid := range pids {
		unlock, err := s.lock(ctx, pid)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, unlock)
	}
	return release, nil
}

// CopyWarehouse writes a copy of the project's warehouse to w: its database
// is checkpointed, so that its file holds every committed change, and the
// file is copied. The caller holds the project (Hold) until it returns, and
// it returns the bytes copied. A project without a warehouse file gives an
// error wrapping os.ErrNotExist.
func (s *Service) CopyWarehouse(ctx context.Context, pid string, w io.Writer) (int64, error) {
	if err := s.wh.Checkpoint(ctx, pid); err != nil {
		return 0, err
	}
	f, err := os.Open(s.wh.Path(pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("copy the warehouse of project %s: %w", pid, err)
	}
	return n, nil
}

// WarehousePath is the file of the project's warehouse, where a restore puts it.
func (s *Service) WarehousePath(pid string) string { return s.wh.Path(pid) }
