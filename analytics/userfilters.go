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

	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/store"
)

// CategoryUserFilter is the category of a mandatory user filter: a condition
// on attributes that every execution of a user it is assigned to meets.
const CategoryUserFilter = store.CategoryUserFilter

// UserFilterContent is the content of a user filter: a condition in MAQL,
// such as [/svc/md/<pid>/obj/12] IN ([/svc/md/<pid>/obj/12/elements?id=3]),
// stored with object URIs.
type UserFilterContent struct {
	Expression string `json:"expression"`
}

// maxUserFilter bounds the expression of a user filter.
const maxUserFilter = 64 << 10

// prepareUserFilter checks a user filter's condition: it parses, names
// attributes (or labels) of the project, compares each with elements of its
// own that exist, and is stored with URIs.
func (s *Service) prepareUserFilter(ctx context.Context, pid string, c *UserFilterContent) (UserFilterContent, []int64, error) {
	const field = CategoryUserFilter + ".content.expression"
	if strings.TrimSpace(c.Expression) == "" {
		return UserFilterContent{}, nil, invalid(field, "is required")
	}
	if len(c.Expression) > maxUserFilter {
		return UserFilterContent{}, nil, invalid(field, "must be at most %d KiB", maxUserFilter>>10)
	}
	f, err := maql.ParseFilter(c.Expression)
	if err != nil {
		return UserFilterContent{}, nil, syntaxError(field, err)
	}
	r, err := s.resolve(ctx, pid, f.Refs())
	if err != nil {
		return UserFilterContent{}, nil, err
	}
	if err := (&exprChecker{refs: r}).cond(f.Cond); err != nil {
		return UserFilterContent{}, nil, invalid(field, "%v", err)
	}
	if err := s.checkElements(ctx, pid, r, f.Cond); err != nil {
		return UserFilterContent{}, nil, invalid(field, "%v", err)
	}
	if err := f.Rewrite(r.uri); err != nil {
		return UserFilterContent{}, nil, invalid(field, "%v", err)
	}
	return UserFilterContent{Expression: f.String()}, r.ids(), nil
}

// checkElements checks that every element a condition names exists.
func (s *Service) checkElements(ctx context.Context, pid string, r *refs, cond maql.Cond) error {
	byObject := map[maql.Ref][]int64{}
	var order []maql.Ref
	walkValues(cond, func(v maql.Value) {
		if e, ok := v.(maql.ElementRef); ok {
			if _, seen := byObject[e.Obj]; !seen {
				order = append(order, e.Obj)
			}
			byObject[e.Obj] = append(byObject[e.Obj], e.ID)
		}
	})
	for _, ref := range order {
		o, err := r.get(ref)
		if err != nil {
			return err
		}
		ids := byObject[ref]
		slices.Sort(ids)
		ids = slices.Compact(ids)
		els, err := s.Elements(ctx, pid, o.ID, ElementsRequest{IDs: ids})
		if err != nil {
			return err
		}
		have := map[int64]bool{}
		for _, e := range els.Items {
			have[e.ID] = true
		}
		for _, id := range ids {
			if !have[id] {
				return fmt.Errorf("%s/elements?id=%d is no element of {%s}", ObjectURI(pid, o.ID), id, o.Identifier)
			}
		}
	}
	return nil
}

// walkValues calls fn with every value a condition compares with.
func walkValues(cond maql.Cond, fn func(maql.Value)) {
	switch x := cond.(type) {
	case maql.And:
		walkValues(x.Left, fn)
		walkValues(x.Right, fn)
	case maql.Or:
		walkValues(x.Left, fn)
		walkValues(x.Right, fn)
	case maql.Not:
		walkValues(x.Cond, fn)
	case maql.Compare:
		fn(x.Right)
	case maql.In:
		for _, v := range x.Values {
			fn(v)
		}
	}
}

// Slice is the part of a project's data that an execution sees: conditions in
// MAQL, stored with object URIs, each of which every row the execution reads
// meets. The zero Slice is all the data. Its conditions are kept sorted and
// without repeats, so that the same conditions make the same Key whatever
// order they came in, and executions of one slice share their results.
type Slice struct {
	conds []string
}

// NewSlice returns the slice of the conditions.
func NewSlice(conds ...string) Slice {
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return Slice{conds: slices.Compact(out)}
}

// Conditions returns the slice's conditions, sorted.
func (s Slice) Conditions() []string { return slices.Clone(s.conds) }

// Whole reports whether the slice is all the data.
func (s Slice) Whole() bool { return len(s.conds) == 0 }

// Key names the slice: equal keys, the same data. "" for all the data.
func (s Slice) Key() string { return strings.Join(s.conds, "\n") }

// UserSlice returns the slice user sees in the project: the conditions of
// every user filter assigned to them.
func (s *Service) UserSlice(ctx context.Context, pid, user string) (Slice, error) {
	list, err := s.store.UserFilters(ctx, pid, user)
	if err != nil {
		return Slice{}, err
	}
	return sliceOf(pid, user, list)
}

// UserSlices returns the slices the users with user filters see in the
// project, by user id, in one read; a user it has none for sees all the data.
func (s *Service) UserSlices(ctx context.Context, pid string) (map[string]Slice, error) {
	all, err := s.store.ProjectUserFilters(ctx, pid)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Slice, len(all))
	for user, list := range all {
		if out[user], err = sliceOf(pid, user, list); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sliceOf is the slice user filters leave a user.
func sliceOf(pid, user string, list []store.Object) (Slice, error) {
	conds := make([]string, 0, len(list))
	for _, o := range list {
		var c UserFilterContent
		if err := json.Unmarshal(o.Content, &c); err != nil || strings.TrimSpace(c.Expression) == "" {
			// A filter that cannot be read must not be read as none: the user sees nothing.
			return Slice{}, fmt.Errorf("user filter %s of user %s cannot be read: %v", ObjectURI(pid, o.ID), user, err)
		}
		conds = append(conds, c.Expression)
	}
	return NewSlice(conds...), nil
}

// Assignment is the user filters a user has in a project, by URI.
type Assignment struct {
	User    string // user id
	Filters []string
}

// AssignmentQuery selects assignments (see store.AssignmentQuery), by user
// id and filter URI.
type AssignmentQuery struct {
	Users   []string
	Filters []string
	Offset  int
	Count   int
}

// Assignments lists the users of the project with user filters that q
// selects, each with all their filters, and how many q selects in all. A
// filter URI that names no object of the project selects nothing.
func (s *Service) Assignments(ctx context.Context, pid string, q AssignmentQuery) ([]Assignment, int, error) {
	sq := store.AssignmentQuery{Users: q.Users, Offset: q.Offset, Count: q.Count}
	for _, uri := range q.Filters {
		id, err := parseObjectURI(pid, uri)
		if err != nil {
			return nil, 0, nil
		}
		sq.Filters = append(sq.Filters, id)
	}
	list, total, err := s.store.Assignments(ctx, pid, sq)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Assignment, len(list))
	for i, a := range list {
		out[i] = Assignment{User: a.UserID, Filters: make([]string, len(a.Filters))}
		for j, id := range a.Filters {
			out[i].Filters[j] = ObjectURI(pid, id)
		}
	}
	return out, total, nil
}

// Assign replaces the user filters of user in the project with the filters
// the URIs name, each a user filter of the project (an *InputError naming
// the URI otherwise); none removes the user's filters. A user that does not
// exist is a *NotFoundError.
func (s *Service) Assign(ctx context.Context, pid, user string, filters []string) error {
	ids := make([]int64, 0, len(filters))
	for _, uri := range filters {
		id, err := parseObjectURI(pid, uri)
		if err != nil {
			return invalid("", "%s is not a user filter of this project", uri)
		}
		ids = append(ids, id)
	}
	found, err := s.store.ObjectsByIDs(ctx, pid, ids)
	if err != nil {
		return err
	}
	ok := make(map[int64]bool, len(found))
	for _, o := range found {
		ok[o.ID] = o.Category == CategoryUserFilter
	}
	for i, id := range ids {
		if !ok[id] {
			return invalid("", "%s is not a user filter of this project", filters[i])
		}
	}
	err = s.store.SetUserFilters(ctx, pid, user, ids)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &NotFoundError{Kind: "user", ID: user}
	case errors.Is(err, store.ErrNotUserFilter):
		return &ConflictError{Msg: "a user filter was deleted meanwhile; try again"}
	}
	return err
}

// refPattern finds the object and element references of a condition:
// [/svc/md/<pid>/obj/<id>] and [/svc/md/<pid>/obj/<id>/elements?id=<n>].
var refPattern = regexp.MustCompile(`\[/svc/md/([a-z0-9]+)/obj/([0-9]+)(?:/elements\?id=([0-9]+))?\]`)

// Describe writes conditions for people, with objects by title and elements
// by their value: [/svc/md/p/obj/12] IN ([/svc/md/p/obj/12/elements?id=3])
// reads Region IN (East). A reference it cannot read stays as it is.
func (s *Service) Describe(ctx context.Context, pid string, conds []string) []string {
	titles := map[string]string{}
	out := make([]string, len(conds))
	for i, c := range conds {
		out[i] = refPattern.ReplaceAllStringFunc(c, func(ref string) string {
			if t, ok := titles[ref]; ok {
				return t
			}
			m := refPattern.FindStringSubmatch(ref)
			t := ref
			id, _ := strconv.ParseInt(m[2], 10, 64)
			switch {
			case m[1] != pid:
			case m[3] == "":
				if o, err := s.store.ObjectByID(ctx, pid, id); err == nil {
					t = o.Title
				}
			default:
				n, _ := strconv.ParseInt(m[3], 10, 64)
				if els, err := s.Elements(ctx, pid, id, ElementsRequest{IDs: []int64{n}}); err == nil && len(els.Items) == 1 {
					t = els.Items[0].Title
				}
			}
			titles[ref] = t
			return t
		})
	}
	return out
}
