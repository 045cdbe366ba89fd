package maintenance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/store"
)

// ExportObjects starts writing the objects with the URIs, and every object they use,
// into an archive and returns the token that names it. A URI that names no object of the
// project fails the task.
func (s *Service) ExportObjects(ctx context.Context, c Caller, pid string, uris []string) (Artifact, error) {
	if len(uris) == 0 {
		return Artifact{}, &analytics.InputError{Field: "partialMDExport.uris", Msg: "must name at least one object"}
	}
	return s.startExport(ctx, c, pid, KindPartialExport, store.ArtifactPartial, nil, func(ctx context.Context, path string) ([]byte, error) {
		snap, err := s.md.SnapshotObjects(ctx, pid, uris)
		if err != nil {
			return nil, err
		}
		a := archive{Manifest: manifest{Kind: store.ArtifactPartial, Project: pid, Created: s.cfg.Clock.Now()}, Snapshot: snap}
		if err := writeArchive(path, a, ""); err != nil {
			return nil, err
		}
		return jsonOf(Summary{Msg: fmt.Sprintf("Exported %d objects", len(snap.Objects))})
	})
}

// ImportOptions tune ImportObjects.
type ImportOptions struct {
	// OverwriteNewer replaces objects of the project even when they changed after the
	// exported ones; otherwise those are kept.
	OverwriteNewer bool
	// UpdateLDMObjects also sets the title, description and tags of the project's data
	// model objects to the exported ones'.
	UpdateLDMObjects bool
}

// ImportObjects starts importing the objects of the archive the token names into the
// project, matched by identifier. A token the caller may not use fails the task, as does
// an object the project's model lacks.
func (s *Service) ImportObjects(ctx context.Context, c Caller, pid, token string, opt ImportOptions) (store.Task, error) {
	art, tokenErr := s.artifact(ctx, c, token, store.ArtifactPartial)
	var invalid *TokenError
	if tokenErr != nil && !errors.As(tokenErr, &invalid) {
		return store.Task{}, tokenErr
	}
	return s.pool.Start(ctx, store.Task{ProjectID: pid, Kind: KindPartialImport, StartedBy: c.UserID}, func(ctx context.Context) ([]byte, error) {
		if tokenErr != nil {
			return nil, task.Errorf("The token is not valid.")
		}
		a, err := readArchive(art.Path, "")
		if err != nil {
			return nil, taskError(err)
		}
		if a.Manifest.Kind != store.ArtifactPartial {
			return nil, task.Errorf("The token is not valid.")
		}
		done, err := s.md.RestoreObjects(ctx, pid, a.Snapshot, analytics.ObjectsOptions{By: c.UserID,
			OverwriteNewer: opt.OverwriteNewer, UpdateModelMeta: opt.UpdateLDMObjects})
		if err != nil {
			return nil, taskError(err)
		}
		return jsonOf(Summary{Msg: restoredMsg(done)})
	})
}

func restoredMsg(d analytics.ObjectsRestored) string {
	msg := fmt.Sprintf("Created %d objects, replaced %d", len(d.Created), len(d.Replaced))
	if len(d.Kept) > 0 {
		msg += fmt.Sprintf(", kept %d newer ones (%s)", len(d.Kept), strings.Join(d.Kept, ", "))
	}
	if len(d.ModelMeta) > 0 {
		msg += fmt.Sprintf(", updated the title, description and tags of %d data model objects", len(d.ModelMeta))
	}
	return msg
}
