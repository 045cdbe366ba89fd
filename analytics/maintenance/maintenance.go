package maintenance

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/task"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// Task kinds.
const (
	KindValidate      = "validate"
	KindExport        = "project.export"
	KindImport        = "project.import"
	KindPartialExport = "partialmd.export"
	KindPartialImport = "partialmd.import"
)

// Options configure a Service: the maintenance section, whose zero values
// take DefaultConfig's, and the parts it works with.
type Options struct {
	Config
	// Dir holds the archives. Required.
	Dir string
	// AdminRole is the identifier of the role that manages a project. Default "adminRole".
	AdminRole string
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
}

// Service runs the maintenance of projects on a task pool.
type Service struct {
	md   *analytics.Service
	st   *store.Store
	pool *task.Pool
	cfg  Options
	log  *slog.Logger
}

// New returns the service, removing the archives that a previous process left
// unfinished or expired. The pool's Run runs its tasks; Run prunes archives as they expire.
func New(ctx context.Context, md *analytics.Service, st *store.Store, pool *task.Pool, cfg Options, log *slog.Logger) (*Service, error) {
	cfg.Config = cfg.withDefaults()
	if cfg.AdminRole == "" {
		cfg.AdminRole = store.RoleAdmin
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("maintenance: %w", err)
	}
	s := &Service{md: md, st: st, pool: pool, cfg: cfg, log: log}
	pool.Declare(KindValidate, KindExport, KindImport, KindPartialExport, KindPartialImport)
	s.sweep(ctx)
	return s, nil
}

// Caller is the user who asks for maintenance.
type Caller struct {
	UserID      string
	Login       string
	DomainAdmin bool // administers the domain, and with it every project
}

// Task returns a task of the project.
func (s *Service) Task(ctx context.Context, pid, id string) (store.Task, error) {
	t, err := s.st.TaskByID(ctx, pid, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Task{}, &analytics.NotFoundError{Kind: "task", ID: id}
	}
	return t, err
}

// Validate starts a validation of the project with the checks (see analytics.Checks,
// in any case); its result is the analytics.Validation as JSON.
func (s *Service) Validate(ctx context.Context, c Caller, pid string, checks []string) (store.Task, error) {
	if len(checks) == 0 {
		return store.Task{}, &analytics.InputError{Field: "validateProject", Msg: "must name at least one of " + strings.Join(analytics.Checks, ", ")}
	}
	for i, name := range checks {
		if _, ok := analytics.CheckOf(name); !ok {
			return store.Task{}, &analytics.InputError{Field: fmt.Sprintf("validateProject[%d]", i),
				Msg: "must be one of " + analytics.CheckNames}
		}
	}
	return s.pool.Start(ctx, store.Task{ProjectID: pid, Kind: KindValidate, StartedBy: c.UserID}, func(ctx context.Context) ([]byte, error) {
		v, err := s.md.Validate(ctx, pid, checks)
		if err != nil {
			return nil, err
		}
		return jsonOf(v)
	})
}

// Artifact is an export under way: its task, and the token that names its archive.
type Artifact struct {
	Token string
	Task  store.Task
}

// newToken returns a random token and its hash.
func newToken() (string, []byte) {
	token := rand.Text()
	return token, tokenHash(token)
}

// tokenHash is the SHA-256 of a token, which the store keeps instead of the token.
func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// startExport records an artifact for an export task that writes its archive with write.
func (s *Service) startExport(ctx context.Context, c Caller, pid, kind, artifactKind string, authorized []string,
	write func(ctx context.Context, path string) ([]byte, error)) (Artifact, error) {
	token, hash := newToken()
	id := store.NewID(24)
	path := filepath.Join(s.cfg.Dir, id+".tar")
	t, err := s.pool.Start(ctx, store.Task{ID: id, ProjectID: pid, Kind: kind, StartedBy: c.UserID}, func(ctx context.Context) ([]byte, error) {
		result, err := write(ctx, path)
		if err != nil {
			os.Remove(path)
			return nil, taskError(err)
		}
		return result, nil
	})
	if err != nil {
		return Artifact{}, err
	}
	now := s.cfg.Clock.Now()
	if aerr := s.st.CreateArtifact(ctx, store.Artifact{TokenHash: hash, Kind: artifactKind, ProjectID: pid, TaskID: t.ID,
		Path: path, Author: c.UserID, Authorized: authorized, Created: now, Expires: now.Add(s.cfg.ArchiveRetention)}); aerr != nil {
		return Artifact{}, aerr
	}
	return Artifact{Token: token, Task: t}, nil
}
