package app

import (
	"context"
	"path/filepath"

	"github.com/heraldhq/herald/analytics/maintenance"
	"github.com/heraldhq/herald/analytics/task"
)

// openMaintenance creates the pool of tasks, failing the tasks a previous process left
// running, and the maintenance service whose archives live in <data>/archives.
func (a *App) openMaintenance(ctx context.Context) error {
	a.tasks = task.New(a.store, task.Config{Workers: a.cfg.Maint.Workers, Queue: a.cfg.Maint.Queue, Clock: a.paced,
		Registerer: a.reg},
		a.log.With("component", "tasks"))
	if _, err := a.tasks.Recover(ctx); err != nil {
		return err
	}
	var err error
	a.maint, err = maintenance.New(ctx, a.md, a.store, a.tasks, maintenance.Options{Config: a.cfg.Maint,
		Dir: filepath.Join(a.cfg.Data, "archives"), Clock: a.paced}, a.log.With("component", "maintenance"))
	return err
}
