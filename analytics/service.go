package analytics

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// Options configure a Service.
type Options struct {
	// Store keeps the models and metadata objects. Required.
	Store *store.Store
	// Dir is the folder of the warehouse files. Required.
	Dir string
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Warehouse tunes DuckDB.
	Warehouse warehouse.Options
}

// Service is the analytics of every project of a data folder. It is safe for concurrent
// use; changes of one project (model, data, objects) are serialized.
type Service struct {
	store *store.Store
	wh    *warehouse.Warehouse
	now   func() time.Time

	mu     sync.Mutex
	locks  map[string]chan struct{}
	models map[string]*projectModel
}

// projectModel is a project's model at one version, with the ids of its objects.
type projectModel struct {
	version int64
	model   *ldm.Model
	ids     map[string]int64 // by identifier
	idents  map[int64]string // by id
}

// New opens the warehouse and returns the service.
func New(ctx context.Context, opt Options) (*Service, error) {
	wh, err := warehouse.Open(ctx, opt.Dir, opt.Warehouse)
	if err != nil {
		return nil, err
	}
	s := &Service{store: opt.Store, wh: wh, now: clock.Or(opt.Clock).Now, locks: map[string]chan struct{}{}, models: map[string]*projectModel{}}
	return s, nil
}

// Close closes the warehouse.
func (s *Service) Close() error { return s.wh.Close() }

// lock serializes the changes of a project; the returned function unlocks.
func (s *Service) lock(ctx context.Context, pid string) (func(), error) {
	s.mu.Lock()
	ch := s.locks[pid]
	if ch == nil {
		ch = make(chan struct{}, 1)
		s.locks[pid] = ch
	}
	s.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// model returns the project's current model, decoding it only when it changed.
func (s *Service) model(ctx context.Context, pid string) (*projectModel, error) {
	version, _, err := s.store.ModelVersions(ctx, pid)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	pm := s.models[pid]
	s.mu.Unlock()
	if pm != nil && pm.version == version {
		return pm, nil
	}
	stored, err := s.store.ProjectModel(ctx, pid)
	if err != nil {
		return nil, err
	}
	m, err := ldm.Decode(stored.Doc)
	if err != nil {
		return nil, err
	}
	ids, err := s.store.ModelObjectIDs(ctx, pid)
	if err != nil {
		return nil, err
	}
	pm = &projectModel{version: stored.ModelVersion, model: m, ids: ids, idents: make(map[int64]string, len(ids))}
	for ident, id := range ids {
		pm.idents[id] = ident
	}
	s.mu.Lock()
	if cur := s.models[pid]; cur == nil || cur.version < pm.version {
		s.models[pid] = pm
	}
	s.mu.Unlock()
	return pm, nil
}

// Model returns the project's logical data model. The caller must not change it.
func (s *Service) Model(ctx context.Context, pid string) (*ldm.Model, error) {
	pm, err := s.model(ctx, pid)
	if err != nil {
		return nil, err
	}
	return pm.model, nil
}

// DataVersion returns the project's data version, which every model change and data load
// increases.
func (s *Service) DataVersion(ctx context.Context, pid string) (int64, error) {
	_, data, err := s.store.ModelVersions(ctx, pid)
	return data, err
}

// ObjectURI is the URI of a metadata object.
func ObjectURI(pid string, id int64) string {
	return "/svc/md/" + pid + "/obj/" + strconv.FormatInt(id, 10)
}

// parseObjectURI returns the id of an object URI of the project.
func parseObjectURI(pid, uri string) (int64, error) {
	rest, ok := strings.CutPrefix(uri, "/svc/md/")
	if !ok {
		return 0, fmt.Errorf("%s is not an object URI", uri)
	}
	owner, rest, ok := strings.Cut(rest, "/obj/")
	if !ok {
		return 0, fmt.Errorf("%s is not an object URI", uri)
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id <= 0 || strings.HasPrefix(rest, "+") {
		return 0, fmt.Errorf("%s is not an object URI", uri)
	}
	if owner != pid {
		return 0, fmt.Errorf("%s is an object of another project", uri)
	}
	return id, nil
}
