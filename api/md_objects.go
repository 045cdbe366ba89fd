package api

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics"
	"github.com/heraldhq/herald/analytics/ldm"
)

type objectMetaJSON struct {
	Author      string `json:"author"`
	URI         string `json:"uri"`
	Tags        string `json:"tags"`
	Created     string `json:"created"`
	Identifier  string `json:"identifier"`
	Deprecated  string `json:"deprecated"`
	Summary     string `json:"summary"`
	Title       string `json:"title"`
	Category    string `json:"category"`
	Updated     string `json:"updated"`
	Contributor string `json:"contributor"`
}

func objectMetaOf(o analytics.Object) objectMetaJSON {
	return objectMetaJSON{
		Author: profileURI(o.Author), URI: o.URI, Tags: o.Tags, Created: timestamp(o.Created), Identifier: o.Identifier,
		Deprecated: strconv.Itoa(btoi(o.Deprecated)), Summary: o.Summary, Title: o.Title, Category: o.Category,
		Updated: timestamp(o.Updated), Contributor: profileURI(o.Contributor),
	}
}

type objectBodyJSON struct {
	Meta    objectMetaJSON    `json:"meta"`
	Content json.RawMessage   `json:"content"`
	Links   map[string]string `json:"links"`
}

// objectJSON is the envelope {<category>:{meta, content, links}}.
func objectJSON(o analytics.Object) map[string]objectBodyJSON {
	links := map[string]string{"self": o.URI}
	maps.Copy(links, o.Links)
	content := o.Content
	if len(content) == 0 {
		content = json.RawMessage("{}")
	}
	return map[string]objectBodyJSON{o.Category: {Meta: objectMetaOf(o), Content: content, Links: links}}
}

// entryJSON is an object in lists (query, using, usedby).
type entryJSON struct {
	Link        string `json:"link"`
	Author      string `json:"author"`
	Contributor string `json:"contributor"`
	Tags        string `json:"tags"`
	Created     string `json:"created"`
	Updated     string `json:"updated"`
	Deprecated  string `json:"deprecated"`
	Summary     string `json:"summary"`
	Title       string `json:"title"`
	Category    string `json:"category"`
	Identifier  string `json:"identifier"`
}

func entriesOf(list []analytics.Object) []entryJSON {
	out := make([]entryJSON, len(list))
	for i, o := range list {
		m := objectMetaOf(o)
		out[i] = entryJSON{Link: o.URI, Author: m.Author, Contributor: m.Contributor, Tags: m.Tags, Created: m.Created,
			Updated: m.Updated, Deprecated: m.Deprecated, Summary: m.Summary, Title: m.Title, Category: m.Category,
			Identifier: m.Identifier}
	}
	return out
}

// objectIn is a metric, report definition or report as clients send it. Server-set meta
// fields that a client echoes back from a GET are accepted and ignored, as are links.
type objectIn[T any] struct {
	Meta    *objectMetaIn   `json:"meta"`
	Content *T              `json:"content"`
	Links   json.RawMessage `json:"links"`
}

type objectMetaIn struct {
	Title       string `json:"title"`
	Summary     string `json:"summary"`
	Tags        string `json:"tags"`
	Identifier  string `json:"identifier"`
	Deprecated  flag   `json:"deprecated"`
	URI         string `json:"uri"`
	Author      string `json:"author"`
	Contributor string `json:"contributor"`
	Created     string `json:"created"`
	Updated     string `json:"updated"`
	Category    string `json:"category"`
}

type objectRequest struct {
	Metric           *objectIn[analytics.MetricContent]           `json:"metric"`
	ReportDefinition *objectIn[analytics.ReportDefinitionContent] `json:"reportDefinition"`
	Report           *objectIn[analytics.ReportContent]           `json:"report"`
	UserFilter       *objectIn[analytics.UserFilterContent]       `json:"userFilter"`
	// The data model's objects are named so that a request for them gets a clear answer.
	Dataset              json.RawMessage `json:"dataset"`
	Attribute            json.RawMessage `json:"attribute"`
	AttributeDisplayForm json.RawMessage `json:"attributeDisplayForm"`
	Fact                 json.RawMessage `json:"fact"`
	Folder               json.RawMessage `json:"folder"`
}

// input decodes an object request into the service's input.
func (s *Server) objectInput(w http.ResponseWriter, r *http.Request) (analytics.Input, error) {
	var req objectRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return analytics.Input{}, err
	}
	for cat, raw := range map[string]json.RawMessage{string(ldm.KindDataset): req.Dataset, string(ldm.KindAttribute): req.Attribute,
		string(ldm.KindLabel): req.AttributeDisplayForm, string(ldm.KindFact): req.Fact, string(ldm.KindFolder): req.Folder} {
		if raw != nil {
			return analytics.Input{}, badRequest("md", "Objects of category %s belong to the data model; change them with MAQL through %s",
				cat, "ldm/manage")
		}
	}
	var in analytics.Input
	given := 0
	if req.Metric != nil {
		given++
		in.Metric = req.Metric.Content
		if err := inputMeta(&in, "metric", req.Metric.Meta, req.Metric.Content != nil); err != nil {
			return in, err
		}
	}
	if req.ReportDefinition != nil {
		given++
		in.ReportDefinition = req.ReportDefinition.Content
		if err := inputMeta(&in, "reportDefinition", req.ReportDefinition.Meta, req.ReportDefinition.Content != nil); err != nil {
			return in, err
		}
	}
	if req.Report != nil {
		given++
		in.Report = req.Report.Content
		if err := inputMeta(&in, "report", req.Report.Meta, req.Report.Content != nil); err != nil {
			return in, err
		}
	}
	if req.UserFilter != nil {
		given++
		in.UserFilter = req.UserFilter.Content
		if err := inputMeta(&in, analytics.CategoryUserFilter, req.UserFilter.Meta, req.UserFilter.Content != nil); err != nil {
			return in, err
		}
	}
	if given != 1 {
		return in, badRequest("md", "The request must hold exactly one of %s", "metric, reportDefinition, report, userFilter")
	}
	return in, nil
}

func inputMeta(in *analytics.Input, cat string, meta *objectMetaIn, hasContent bool) error {
	if meta == nil {
		return badField(cat+".meta", "is required")
	}
	if !hasContent {
		return badField(cat+".content", "is required")
	}
	in.Title, in.Summary, in.Tags, in.Identifier, in.Deprecated = meta.Title, meta.Summary, meta.Tags, meta.Identifier, bool(meta.Deprecated)
	return nil
}

// createObject answers {uri}, or, with ?createAndGet=true as the platform's Java SDK asks,
// the object as GET reads it. Its setIdentifier=true changes nothing: an object without
// an identifier always gets one.
func (s *Server) createObject(w http.ResponseWriter, r *http.Request, c *caller) error {
	in, err := s.objectInput(w, r)
	if err != nil {
		return err
	}
	if in.UserFilter != nil && !managesProject(c) {
		return userFilterDenied()
	}
	o, err := s.analytics.CreateObject(r.Context(), c.project.ID, c.UserID, in)
	if err != nil {
		return mdError(err)
	}
	if v := r.URL.Query().Get("createAndGet"); v != "true" && v != "1" {
		respond(w, r, http.StatusOK, uriJSON(o.URI))
		return nil
	}
	if o, err = s.analytics.Object(r.Context(), c.project.ID, o.ID); err != nil {
		return mdError(err)
	}
	respond(w, r, http.StatusOK, objectJSON(o))
	return nil
}

func (s *Server) getObject(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, err := objectID(r)
	if err != nil && s.executor != nil {
		return s.getResultObject(w, r, c) // not a number: the reportResult2 of an execution
	}
	if err != nil {
		return err
	}
	o, err := s.analytics.Object(r.Context(), c.project.ID, id)
	if err != nil {
		return mdError(err)
	}
	if o.Category == analytics.CategoryUserFilter && !managesProject(c) {
		return userFilterDenied()
	}
	respond(w, r, http.StatusOK, objectJSON(o))
	return nil
}

func (s *Server) putObject(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, err := objectID(r)
	if err != nil {
		return err
	}
	if err := s.guardObject(r.Context(), c, id); err != nil {
		return err
	}
	in, err := s.objectInput(w, r)
	if err != nil {
		return err
	}
	if in.UserFilter != nil && !managesProject(c) {
		return userFilterDenied()
	}
	o, err := s.analytics.UpdateObject(r.Context(), c.project.ID, id, c.UserID, in)
	if err != nil {
		return mdError(err)
	}
	respond(w, r, http.StatusOK, uriJSON(o.URI))
	return nil
}

func (s *Server) deleteObject(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, err := objectID(r)
	if err != nil {
		return err
	}
	if err := s.guardObject(r.Context(), c, id); err != nil {
		return err
	}
	if err := s.analytics.DeleteObject(r.Context(), c.project.ID, id); err != nil {
		return mdError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) queryObjects(w http.ResponseWriter, r *http.Request, c *caller) error {
	query := r.PathValue("category")
	cat, list, err := s.analytics.List(r.Context(), c.project.ID, query)
	if err != nil {
		return mdError(err)
	}
	if cat == analytics.CategoryUserFilter && !managesProject(c) {
		return userFilterDenied()
	}
	respond(w, r, http.StatusOK, map[string]any{"query": map[string]any{
		"entries": entriesOf(list),
		"meta": map[string]string{"title": "List of " + strings.ToLower(query), "category": "query",
			"summary": "Metadata objects of category " + cat},
	}})
	return nil
}

// queryObjectsPaged serves objects/query?category=report&limit=50&offset=0, the listing
// the platform's Ruby SDK reads objects from: whole objects, a page at a time.
func (s *Server) queryObjectsPaged(w http.ResponseWriter, r *http.Request, c *caller) error {
	offset, limit, _, err := paging(r, 50, 500)
	if err != nil {
		return err
	}
	category := r.URL.Query().Get("category")
	if category == "" {
		return badRequest("api", "Query parameter %s is required", "category")
	}
	if !managesProject(c) && (strings.EqualFold(category, analytics.CategoryUserFilter) || strings.EqualFold(category, "userfilters")) {
		return userFilterDenied()
	}
	list, total, err := s.analytics.ObjectsOf(r.Context(), c.project.ID, category, offset, limit)
	var input *analytics.InputError
	if errors.As(err, &input) {
		return badRequest("api", "Query parameter %s "+escapePercent(input.Msg), "category")
	}
	if err != nil {
		return mdError(err)
	}
	items := make([]map[string]objectBodyJSON, len(list))
	for i, o := range list {
		items[i] = objectJSON(o)
	}
	extra := "&category=" + url.QueryEscape(category)
	respond(w, r, http.StatusOK, map[string]any{"objects": map[string]any{
		"paging": pageOf(r.URL.Path, offset, limit, len(items), total, extra), "items": items,
	}})
	return nil
}

type identifiersRequest struct {
	IdentifierToURI []string `json:"identifierToUri"`
}

func (s *Server) identifiers(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req identifiersRequest
	if err := s.decodeBody(w, r, &req); err != nil {
		return err
	}
	if len(req.IdentifierToURI) == 0 {
		return badField("identifierToUri", "must list at least one identifier")
	}
	list, unknown, err := s.analytics.Identifiers(r.Context(), c.project.ID, req.IdentifierToURI)
	if err != nil {
		return mdError(err)
	}
	out := make([]map[string]string, len(list))
	for i, o := range list {
		out[i] = map[string]string{"identifier": o.Identifier, "uri": o.URI}
	}
	body := map[string]any{"identifiers": out}
	if len(unknown) > 0 {
		body["unknownIdentifiers"] = unknown // in request order, like identifiers
	}
	respond(w, r, http.StatusOK, body)
	return nil
}

func (s *Server) using(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.dependencies(w, r, c, s.analytics.Using)
}

func (s *Server) usedBy(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.dependencies(w, r, c, s.analytics.UsedBy)
}

// dependencies answers using2 and usedby2: ?nearest=1 keeps direct uses only, and
// ?types=metric,fact keeps objects of those categories.
func (s *Server) dependencies(w http.ResponseWriter, r *http.Request, c *caller,
	walk func(ctx context.Context, pid string, id int64, nearest bool) ([]analytics.Object, error)) error {
	id, err := objectID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	nearest := q.Get("nearest") == "1" || q.Get("nearest") == "true"
	if err := s.guardObject(r.Context(), c, id); err != nil {
		return err
	}
	list, err := walk(r.Context(), c.project.ID, id, nearest)
	if err != nil {
		return mdError(err)
	}
	list = withoutUserFilters(c, list)
	if types := q.Get("types"); types != "" {
		keep := map[string]bool{}
		for _, t := range strings.Split(types, ",") {
			keep[strings.TrimSpace(t)] = true
		}
		list = slices.DeleteFunc(list, func(o analytics.Object) bool { return !keep[o.Category] })
	}
	respond(w, r, http.StatusOK, map[string]any{"entries": entriesOf(list)})
	return nil
}

// listElements answers the elements of an attribute or label: ?id=N (repeatable) picks
// elements, ?offset and ?limit (default 1000) page them.
func (s *Server) listElements(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, err := objectID(r)
	if err != nil {
		return err
	}
	offset, limit, _, err := paging(r, 1000, 10000)
	if err != nil {
		return err
	}
	slice, err := s.callerSlice(r, c)
	if err != nil {
		return err
	}
	req := analytics.ElementsRequest{Offset: offset, Limit: limit, Slice: slice}
	for _, v := range r.URL.Query()["id"] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return badRequest("api", "Query parameter %s must be a whole number of at least 0", "id")
		}
		req.IDs = append(req.IDs, n)
	}
	els, err := s.analytics.Elements(r.Context(), c.project.ID, id, req)
	if err != nil {
		return mdError(err)
	}
	base := r.URL.Path
	items := make([]map[string]string, len(els.Items))
	for i, e := range els.Items {
		items[i] = map[string]string{"title": e.Title, "uri": base + "?id=" + strconv.FormatInt(e.ID, 10)}
	}
	page := pageOf(base, offset, limit, len(items), int(els.Total), "")
	respond(w, r, http.StatusOK, map[string]any{"attributeElements": map[string]any{
		"elementsMeta": map[string]any{"attribute": els.Attribute, "attributeDisplayForm": els.Label, "count": len(items),
			"offset": offset, "total": els.Total, "order": "asc", "filter": "", "prompt": ""},
		"paging":   map[string]any{"count": len(items), "offset": offset, "total": els.Total, "next": page.Next},
		"elements": items,
	}})
	return nil
}
