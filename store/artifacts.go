package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Artifact kinds.
const (
	ArtifactProject = "project" // a whole project
	ArtifactPartial = "partial" // metadata objects with what they use
)

// Artifact is the archive an export task writes, named by a token whose SHA-256 is
// TokenHash.
type Artifact struct {
	TokenHash  []byte
	Kind       string
	ProjectID  string // the exported project
	TaskID     string // the export task
	Path       string // the archive in the data folder
	Author     string // user id of the exporter
	Authorized []string
	Created    time.Time
	Expires    time.Time
}

const artifactColumns = `token_hash, kind, project_id, task_id, path, author, authorized, created, expires`

// CreateArtifact records an artifact.
func (s *Store) CreateArtifact(ctx context.Context, a Artifact) error {
	authorized, err := json.Marshal(a.Authorized)
	if err != nil {
		return fmt.Errorf("create artifact: %w", err)
	}
	if a.Authorized == nil {
		authorized = []byte("[]")
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO md_artifacts(`+artifactColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.TokenHash, a.Kind, a.ProjectID, a.TaskID, a.Path, a.Author, string(authorized), a.Created.Unix(), a.Expires.Unix())
	if err != nil {
		return fmt.Errorf("create artifact: %w", err)
	}
	return nil
}

func scanArtifact(row scanner) (Artifact, error) {
	var a Artifact
	var authorized string
	var created, expires int64
	err := row.Scan(&a.TokenHash, &a.Kind, &a.ProjectID, &a.TaskID, &a.Path, &a.Author, &authorized, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Artifact{}, ErrNotFound
	}
	if err != nil {
		return Artifact{}, fmt.Errorf("scan artifact: %w", err)
	}
	if err := json.Unmarshal([]byte(authorized), &a.Authorized); err != nil {
		return Artifact{}, fmt.Errorf("scan artifact: %w", err)
	}
	a.Created, a.Expires = time.Unix(created, 0).UTC(), time.Unix(expires, 0).UTC()
	return a, nil
}

// ArtifactByToken returns the artifact whose token has the SHA-256 hash.
func (s *Store) ArtifactByToken(ctx context.Context, hash []byte) (Artifact, error) {
	return scanArtifact(s.r.QueryRowContext(ctx, `SELECT `+artifactColumns+` FROM md_artifacts WHERE token_hash = ?`, hash))
}

// ExpiredArtifacts lists the artifacts that expired at or before now.
func (s *Store) ExpiredArtifacts(ctx context.Context, now time.Time) ([]Artifact, error) {
	out, err := queryAll(ctx, s.r, scanArtifact, `SELECT `+artifactColumns+` FROM md_artifacts WHERE expires <= ?`, now.Unix())
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	return out, nil
}

// ArtifactPaths lists the files of every artifact.
func (s *Store) ArtifactPaths(ctx context.Context) ([]string, error) {
	out, err := queryAll(ctx, s.r, func(row scanner) (string, error) {
		var p string
		return p, row.Scan(&p)
	}, `SELECT path FROM md_artifacts`)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	return out, nil
}

// DeleteArtifact removes an artifact's record.
func (s *Store) DeleteArtifact(ctx context.Context, hash []byte) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM md_artifacts WHERE token_hash = ?`, hash); err != nil {
		return fmt.Errorf("delete artifact: %w", err)
	}
	return nil
}
