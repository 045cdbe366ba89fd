package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/store"
)

// Object is a metadata object of a project.
type Object struct {
	ID          int64
	URI         string
	Category    string
	Identifier  string
	Title       string
	Summary     string
	Tags        string
	Deprecated  bool
	Author      string // user id
	Contributor string // user id
	Created     time.Time
	Updated     time.Time
	// Content is the object's content (JSON); nil in listings.
	Content json.RawMessage
	// Links are the object's URIs beside its own: "elements" for attributes and labels.
	Links map[string]string
}

func objectOf(pid string, o store.Object) Object {
	out := Object{
		ID: o.ID, URI: ObjectURI(pid, o.ID), Category: o.Category, Identifier: o.Identifier, Title: o.Title,
		Summary: o.Summary, Tags: o.Tags, Deprecated: o.Deprecated, Author: o.Author, Contributor: o.Contributor,
		Created: o.Created, Updated: o.Updated, Content: o.Content,
	}
	if o.Category == string(ldm.KindAttribute) || o.Category == string(ldm.KindLabel) {
		out.Links = map[string]string{"elements": out.URI + "/elements"}
	}
	return out
}

// Input is a metric, report definition or report to create or to replace an object with:
// exactly one of the contents is set. An empty Identifier is generated on create and kept
// on replace.
type Input struct {
	Identifier       string
	Title            string
	Summary          string
	Tags             string
	Deprecated       bool
	Metric           *MetricContent
	ReportDefinition *ReportDefinitionContent
	Report           *ReportContent
	UserFilter       *UserFilterContent
}

func (in *Input) category() string {
	switch {
	case in.Metric != nil:
		return CategoryMetric
	case in.ReportDefinition != nil:
		return CategoryReportDefinition
	case in.Report != nil:
		return CategoryReport
	case in.UserFilter != nil:
		return CategoryUserFilter
	}
	return ""
}

var identifierRE = regexp.MustCompile(`^[A-Za-z0-9_.]{1,255}$`)

func (in *Input) checkMeta() error {
	cat := in.category()
	if cat == "" {
		return invalid("", "one of metric, reportDefinition, report or userFilter is required")
	}
	if in.Identifier != "" && !identifierRE.MatchString(in.Identifier) {
		return invalid(cat+".meta.identifier", "must be 1 to 255 letters, digits, _ and .")
	}
	if strings.TrimSpace(in.Title) == "" {
		return invalid(cat+".meta.title", "is required")
	}
	if utf8.RuneCountInString(in.Title) > 255 {
		return invalid(cat+".meta.title", "must be at most 255 characters")
	}
	if utf8.RuneCountInString(in.Summary) > 10000 {
		return invalid(cat+".meta.summary", "must be at most 10000 characters")
	}
	return nil
}

// prepare validates the content of in and returns it as stored, with the ids of the
// objects it uses. self is the id of the object being replaced, 0 on create.
func (s *Service) prepare(ctx context.Context, pid string, self int64, in *Input) ([]byte, []int64, error) {
	var content any
	var uses []int64
	var err error
	switch in.category() {
	case CategoryMetric:
		content, uses, err = s.prepareMetric(ctx, pid, self, in.Metric)
	case CategoryReportDefinition:
		content, uses, err = s.prepareReportDefinition(ctx, pid, in.ReportDefinition)
	case CategoryReport:
		content, uses, err = s.prepareReport(ctx, pid, in.Report)
	case CategoryUserFilter:
		content, uses, err = s.prepareUserFilter(ctx, pid, in.UserFilter)
	}
	if err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(content)
	if err != nil {
		return nil, nil, fmt.Errorf("encode content: %w", err)
	}
	return data, uses, nil
}

// CreateObject creates a metric, report definition, report or user filter and returns it.
func (s *Service) CreateObject(ctx context.Context, pid, by string, in Input) (Object, error) {
	if err := in.checkMeta(); err != nil {
		return Object{}, err
	}
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return Object{}, err
	}
	defer unlock()
	content, uses, err := s.prepare(ctx, pid, 0, &in)
	if err != nil {
		return Object{}, err
	}
	if in.Identifier == "" {
		in.Identifier = in.category() + "." + store.NewID(12)
	}
	now := s.now()
	o := store.Object{
		ProjectID: pid, Category: in.category(), Identifier: in.Identifier, Title: in.Title, Summary: in.Summary,
		Tags: in.Tags, Deprecated: in.Deprecated, Content: content, Author: by, Contributor: by, Created: now, Updated: now,
	}
	o.ID, err = s.store.CreateObject(ctx, o, uses)
	if errors.Is(err, store.ErrConflict) {
		return Object{}, &ConflictError{Msg: fmt.Sprintf("identifier %s is already used in the project", in.Identifier)}
	}
	if err != nil {
		return Object{}, err
	}
	return objectOf(pid, o), nil
}

// userObject returns an object users may change.
func (s *Service) userObject(ctx context.Context, pid string, id int64) (store.Object, error) {
	o, err := s.store.ObjectByID(ctx, pid, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Object{}, &NotFoundError{Kind: "object", ID: strconv.FormatInt(id, 10)}
	}
	if err != nil {
		return store.Object{}, err
	}
	if o.InModel {
		return store.Object{}, invalid("", "%s is the %s {%s} of the data model; change it with MAQL through ldm/manage",
			ObjectURI(pid, id), o.Category, o.Identifier)
	}
	return o, nil
}

// UpdateObject replaces a metric, report definition or report.
func (s *Service) UpdateObject(ctx context.Context, pid string, id int64, by string, in Input) (Object, error) {
	if err := in.checkMeta(); err != nil {
		return Object{}, err
	}
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return Object{}, err
	}
	defer unlock()
	old, err := s.userObject(ctx, pid, id)
	if err != nil {
		return Object{}, err
	}
	if old.Category != in.category() {
		return Object{}, invalid("", "%s is a %s, not a %s", ObjectURI(pid, id), old.Category, in.category())
	}
	content, uses, err := s.prepare(ctx, pid, id, &in)
	if err != nil {
		return Object{}, err
	}
	if in.Identifier == "" {
		in.Identifier = old.Identifier
	}
	o := old
	o.Identifier, o.Title, o.Summary, o.Tags, o.Deprecated = in.Identifier, in.Title, in.Summary, in.Tags, in.Deprecated
	o.Content, o.Contributor, o.Updated = content, by, s.now()
	err = s.store.UpdateObject(ctx, o, uses)
	if errors.Is(err, store.ErrConflict) {
		return Object{}, &ConflictError{Msg: fmt.Sprintf("identifier %s is already used in the project", in.Identifier)}
	}
	if err != nil {
		return Object{}, err
	}
	return objectOf(pid, o), nil
}

// DeleteObject deletes a metric, report definition, report or user filter that no
// other object uses; a user filter that users have is a *ConflictError.
func (s *Service) DeleteObject(ctx context.Context, pid string, id int64) error {
	unlock, err := s.lock(ctx, pid)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := s.userObject(ctx, pid, id); err != nil {
		return err
	}
	err = s.store.DeleteObject(ctx, pid, id)
	if errors.Is(err, store.ErrAssigned) {
		return &ConflictError{Msg: fmt.Sprintf("user filter %s is assigned to users; take it from them first (POST %s)",
			ObjectURI(pid, id), "/svc/md/"+pid+"/userfilters")}
	}
	var inUse *store.InUseError
	if errors.As(err, &inUse) {
		ids := make([]int64, 0, len(inUse.By))
		for _, by := range inUse.By {
			n, _ := strconv.ParseInt(by, 10, 64)
			ids = append(ids, n)
		}
		users, err := s.store.ObjectsByIDs(ctx, pid, ids)
		if err != nil {
			return err
		}
		return &InUseError{URI: ObjectURI(pid, id), Users: s.objects(pid, users)}
	}
	if errors.Is(err, store.ErrNotFound) {
		return &NotFoundError{Kind: "object", ID: strconv.FormatInt(id, 10)}
	}
	return err
}

// Object returns an object of the project with its content.
func (s *Service) Object(ctx context.Context, pid string, id int64) (Object, error) {
	o, err := s.store.ObjectByID(ctx, pid, id)
	if errors.Is(err, store.ErrNotFound) {
		return Object{}, &NotFoundError{Kind: "object", ID: strconv.FormatInt(id, 10)}
	}
	if err != nil {
		return Object{}, err
	}
	out := objectOf(pid, o)
	if o.InModel {
		pm, err := s.model(ctx, pid)
		if err != nil {
			return Object{}, err
		}
		if out.Content, err = json.Marshal(modelContent(pid, pm, o.Category, o.Identifier)); err != nil {
			return Object{}, err
		}
	}
	return out, nil
}

func (s *Service) exists(ctx context.Context, pid string, id int64) error {
	_, err := s.store.ObjectByID(ctx, pid, id)
	if errors.Is(err, store.ErrNotFound) {
		return &NotFoundError{Kind: "object", ID: strconv.FormatInt(id, 10)}
	}
	return err
}

func (s *Service) objects(pid string, list []store.Object) []Object {
	out := make([]Object, len(list))
	for i, o := range list {
		out[i] = objectOf(pid, o)
	}
	return out
}

// Query categories of List, as the query URIs name them, and the object categories they list.
var queryCategories = map[string]string{
	"reports": CategoryReport, "reportdefinition": CategoryReportDefinition, "reportdefinitions": CategoryReportDefinition,
	"metrics": CategoryMetric, "facts": string(ldm.KindFact), "attributes": string(ldm.KindAttribute),
	"datasets": string(ldm.KindDataset), "folders": string(ldm.KindFolder),
	"attributedisplayforms": string(ldm.KindLabel), "labels": string(ldm.KindLabel),
	"userfilters": CategoryUserFilter,
}

// List lists the project's objects of a query category (reports, reportdefinition,
// metrics, facts, attributes, datasets, folders, labels), oldest first.
func (s *Service) List(ctx context.Context, pid, query string) (string, []Object, error) {
	cat, ok := queryCategories[strings.ToLower(query)]
	if !ok {
		names := make([]string, 0, len(queryCategories))
		for k := range queryCategories {
			names = append(names, k)
		}
		slices.Sort(names)
		return "", nil, &NotFoundError{Kind: "query", ID: query + " (known: " + strings.Join(names, ", ") + ")"}
	}
	list, err := s.store.ObjectsByCategory(ctx, pid, cat)
	if err != nil {
		return "", nil, err
	}
	return cat, s.objects(pid, list), nil
}

// ObjectsOf returns a page of the project's objects of a category with their content,
// oldest first, and how many the category has. category is an object category (report,
// reportDefinition, metric, attribute, attributeDisplayForm, fact, dataset, folder) or
// a query category of List, in any case.
func (s *Service) ObjectsOf(ctx context.Context, pid, category string, offset, limit int) ([]Object, int, error) {
	cat, ok := objectCategory(category)
	if !ok {
		return nil, 0, invalid("category", "must be one of report, reportDefinition, metric, attribute, attributeDisplayForm, fact, dataset, folder, userFilter")
	}
	list, err := s.store.ObjectsByCategory(ctx, pid, cat)
	if err != nil {
		return nil, 0, err
	}
	page := list[min(offset, len(list)):min(offset+limit, len(list))]
	out := make([]Object, 0, len(page))
	for _, o := range page {
		full, err := s.Object(ctx, pid, o.ID)
		var missing *NotFoundError
		if errors.As(err, &missing) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, full)
	}
	return out, len(list), nil
}

// objectCategory returns the object category that name stands for.
func objectCategory(name string) (string, bool) {
	if cat, ok := queryCategories[strings.ToLower(name)]; ok {
		return cat, true
	}
	for _, cat := range queryCategories {
		if strings.EqualFold(cat, name) {
			return cat, true
		}
	}
	return "", false
}

// Identifiers returns the objects of the project with the given identifiers in the
// order asked (each once), and apart the identifiers the project has no object for.
func (s *Service) Identifiers(ctx context.Context, pid string, identifiers []string) (found []Object, unknown []string, err error) {
	list, err := s.store.ObjectsByIdentifiers(ctx, pid, identifiers)
	if err != nil {
		return nil, nil, err
	}
	byIdentifier := make(map[string]Object, len(list))
	for _, o := range s.objects(pid, list) {
		byIdentifier[o.Identifier] = o
	}
	seen := make(map[string]bool, len(identifiers))
	for _, id := range identifiers {
		if seen[id] {
			continue
		}
		seen[id] = true
		if o, ok := byIdentifier[id]; ok {
			found = append(found, o)
		} else {
			unknown = append(unknown, id)
		}
	}
	return found, unknown, nil
}

// Using lists the objects the object uses, directly when nearest is set and otherwise
// also through others. UsedBy lists the objects that use it.
func (s *Service) Using(ctx context.Context, pid string, id int64, nearest bool) ([]Object, error) {
	if err := s.exists(ctx, pid, id); err != nil {
		return nil, err
	}
	list, err := s.store.Uses(ctx, pid, id, !nearest)
	if err != nil {
		return nil, err
	}
	return s.objects(pid, list), nil
}

// UsedBy lists the objects that use the object, directly when nearest is set and
// otherwise also through others.
func (s *Service) UsedBy(ctx context.Context, pid string, id int64, nearest bool) ([]Object, error) {
	if err := s.exists(ctx, pid, id); err != nil {
		return nil, err
	}
	list, err := s.store.UsedBy(ctx, pid, id, !nearest)
	if err != nil {
		return nil, err
	}
	return s.objects(pid, list), nil
}
