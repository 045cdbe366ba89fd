package analytics

import (
	"context"
	"fmt"
	"strconv"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
	"github.com/heraldhq/herald/store"
)

// refs resolves the object references of a request: URIs and identifiers to the
// project's objects.
type refs struct {
	pid   string
	model *ldm.Model
	objs  map[maql.Ref]store.Object
	bad   map[maql.Ref]string // why a reference does not resolve
}

// resolve looks up every reference at once.
func (s *Service) resolve(ctx context.Context, pid string, list []maql.Ref) (*refs, error) {
	pm, err := s.model(ctx, pid)
	if err != nil {
		return nil, err
	}
	r := &refs{pid: pid, model: pm.model, objs: map[maql.Ref]store.Object{}, bad: map[maql.Ref]string{}}
	var ids []int64
	var idents []string
	for _, ref := range list {
		if ref.Identifier != "" {
			idents = append(idents, ref.Identifier)
			continue
		}
		id, err := parseObjectURI(pid, ref.URI)
		if err != nil {
			r.bad[ref] = err.Error()
			continue
		}
		ids = append(ids, id)
	}
	byID, err := s.store.ObjectsByIDs(ctx, pid, ids)
	if err != nil {
		return nil, err
	}
	byIdent, err := s.store.ObjectsByIdentifiers(ctx, pid, idents)
	if err != nil {
		return nil, err
	}
	found := map[string]store.Object{}
	for _, o := range byID {
		found[ObjectURI(pid, o.ID)] = o
	}
	for _, o := range byIdent {
		found["{"+o.Identifier+"}"] = o
	}
	for _, ref := range list {
		if _, bad := r.bad[ref]; bad {
			continue
		}
		key := ref.URI
		if ref.Identifier != "" {
			key = "{" + ref.Identifier + "}"
		}
		if o, ok := found[key]; ok {
			r.objs[ref] = o
		} else if ref.Identifier != "" {
			r.bad[ref] = fmt.Sprintf("no object of the project has identifier %s", ref)
		} else {
			r.bad[ref] = fmt.Sprintf("%s is not an object of this project", ref.URI)
		}
	}
	return r, nil
}

// get returns the object a reference stands for.
func (r *refs) get(ref maql.Ref) (store.Object, error) {
	if msg, ok := r.bad[ref]; ok {
		return store.Object{}, fmt.Errorf("%s", msg)
	}
	return r.objs[ref], nil
}

// want returns the object a reference stands for, checking that it is of one of the
// categories.
func (r *refs) want(ref maql.Ref, what string, categories ...string) (store.Object, error) {
	o, err := r.get(ref)
	if err != nil {
		return o, err
	}
	for _, c := range categories {
		if o.Category == c {
			return o, nil
		}
	}
	return o, fmt.Errorf("%s is %s, not %s", ref, describe(o), what)
}

// describe names an object in a message: `the fact {fact.x}`.
func describe(o store.Object) string {
	cat := o.Category
	if cat == string(ldm.KindLabel) {
		cat = "label"
	}
	return "the " + cat + " {" + o.Identifier + "}"
}

// attributeOf returns the identifier of the attribute an attribute or label object
// stands for.
func (r *refs) attributeOf(o store.Object) string {
	if l := r.model.Labels[o.Identifier]; o.Category == string(ldm.KindLabel) && l != nil {
		return l.Attribute
	}
	return o.Identifier
}

// uri returns the canonical URI of a resolved reference.
func (r *refs) uri(ref maql.Ref) (maql.Ref, error) {
	o, err := r.get(ref)
	if err != nil {
		return ref, err
	}
	return maql.Ref{URI: ObjectURI(r.pid, o.ID)}, nil
}

// ids returns the ids of the resolved objects, each once.
func (r *refs) ids() []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, o := range r.objs {
		if !seen[o.ID] {
			seen[o.ID] = true
			out = append(out, o.ID)
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
