package maintenance

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/store"
)

// TokenError is a token that cannot be imported; Reason says why, in words that follow
// the token's name ("has expired").
type TokenError struct {
	Reason string
}

func (e *TokenError) Error() string { return "the token " + e.Reason }

var errNotValid = &TokenError{Reason: "is not a valid export token"}

// artifact returns the finished export of the kind that the token names and that the
// caller may import: its exporter, a login it authorized, or a domain admin. Whoever may
// not import it learns only that the token is not valid.
func (s *Service) artifact(ctx context.Context, c Caller, token, kind string) (store.Artifact, error) {
	a, err := s.st.ArtifactByToken(ctx, tokenHash(token))
	if errors.Is(err, store.ErrNotFound) {
		return a, errNotValid
	}
	if err != nil {
		return a, err
	}
	allowed := c.DomainAdmin || a.Author == c.UserID ||
		slices.ContainsFunc(a.Authorized, func(login string) bool { return strings.EqualFold(login, c.Login) })
	if !allowed || a.Kind != kind {
		return a, errNotValid
	}
	if !s.cfg.Clock.Now().Before(a.Expires) {
		return a, &TokenError{Reason: "has expired"}
	}
	t, err := s.st.TaskByID(ctx, a.ProjectID, a.TaskID)
	if err != nil {
		return a, err
	}
	switch t.Status {
	case store.TaskRunning:
		return a, &TokenError{Reason: "names an export that has not finished yet; poll its status until it is OK"}
	case store.TaskError:
		return a, &TokenError{Reason: "names an export that failed"}
	}
	if _, err := os.Stat(a.Path); err != nil {
		return a, errNotValid
	}
	return a, nil
}

// Run removes archives as they expire until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	t := s.cfg.Clock.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			s.Prune(ctx)
		}
	}
}

// Prune removes the archives that have expired and forgets their tokens.
func (s *Service) Prune(ctx context.Context) {
	expired, err := s.st.ExpiredArtifacts(ctx, s.cfg.Clock.Now())
	if err != nil {
		s.log.Warn("prune archives", "err", err)
		return
	}
	for _, a := range expired {
		if err := os.Remove(a.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("remove archive", "path", a.Path, "err", err)
			continue
		}
		if err := s.st.DeleteArtifact(ctx, a.TokenHash); err != nil {
			s.log.Warn("prune archives", "err", err)
		}
	}
}

// sweep prunes, then removes the files of the archive folder that no artifact names,
// and the working folders of exports and imports: those that a stop cut off. It runs
// before any task starts.
func (s *Service) sweep(ctx context.Context) {
	s.Prune(ctx)
	for _, pattern := range []string{"export-*", "import-*"} {
		dirs, _ := filepath.Glob(filepath.Join(s.md.TempDir(), pattern))
		for _, d := range dirs {
			if err := os.RemoveAll(d); err != nil {
				s.log.Warn("sweep working folders", "path", d, "err", err)
			}
		}
	}
	paths, err := s.st.ArtifactPaths(ctx)
	if err != nil {
		s.log.Warn("sweep archives", "err", err)
		return
	}
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		s.log.Warn("sweep archives", "err", err)
		return
	}
	for _, e := range entries {
		p := filepath.Join(s.cfg.Dir, e.Name())
		if !e.IsDir() && !slices.Contains(paths, p) {
			if err := os.Remove(p); err != nil {
				s.log.Warn("sweep archives", "path", p, "err", err)
			}
		}
	}
}
