package store

import (
	"context"
	"fmt"
)

// DataVersions returns the data version of every project whose model was
// ever changed, by project id: what changes with each model change and data
// load, and so tells when a project's warehouse changed.
func (s *Store) DataVersions(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := eachRow(ctx, s.r, func(row scanner) error {
		var id string
		var v int64
		if err := row.Scan(&id, &v); err != nil {
			return err
		}
		out[id] = v
		return nil
	}, `SELECT project_id, data_version FROM project_models`)
	if err != nil {
		return nil, fmt.Errorf("data versions: %w", err)
	}
	return out, nil
}
