package maql

import "fmt"

// Refs returns every object the metric refers to, each once, in order of first appearance:
// facts, attributes, labels and metrics, and the attribute or label of each element.
func (m *Metric) Refs() []Ref {
	var refs []Ref
	seen := map[Ref]bool{}
	// The walk only collects, so it cannot fail.
	_, _ = rewriteSelect(m.Root, func(r Ref) (Ref, error) {
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
		return r, nil
	})
	return refs
}

// Rewrite replaces every reference r of the metric by fn(r), for instance identifiers by
// URIs before the metric is stored. The references of elements must stay URIs. On an error
// the metric is left unchanged and the error of fn is returned as it is.
func (m *Metric) Rewrite(fn func(Ref) (Ref, error)) error {
	root, err := rewriteSelect(m.Root, func(r Ref) (Ref, error) {
		out, err := fn(r)
		if err != nil {
			return Ref{}, err
		}
		if !out.valid() {
			return Ref{}, fmt.Errorf("rewrite %s: invalid reference %s", r, out)
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	m.Root = root
	return nil
}

// The rewrite functions build a new tree and leave the old one untouched, so a failed
// rewrite changes nothing.

func rewriteSelect(s Select, fn func(Ref) (Ref, error)) (Select, error) {
	var err error
	out := Select{}
	if out.Expr, err = rewriteExpr(s.Expr, fn); err != nil {
		return s, err
	}
	if s.Where != nil {
		if out.Where, err = rewriteCond(s.Where, fn); err != nil {
			return s, err
		}
	}
	if out.By.Attrs, err = rewriteRefs(s.By.Attrs, fn); err != nil {
		return s, err
	}
	if out.By.All, err = rewriteRefs(s.By.All, fn); err != nil {
		return s, err
	}
	out.By.AllOther = s.By.AllOther
	return out, nil
}

func rewriteRefs(refs []Ref, fn func(Ref) (Ref, error)) ([]Ref, error) {
	if refs == nil {
		return nil, nil
	}
	out := make([]Ref, len(refs))
	for i, r := range refs {
		var err error
		if out[i], err = fn(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func rewriteExprs(es []Expr, fn func(Ref) (Ref, error)) ([]Expr, error) {
	out := make([]Expr, len(es))
	for i, e := range es {
		var err error
		if out[i], err = rewriteExpr(e, fn); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func rewriteExpr(e Expr, fn func(Ref) (Ref, error)) (Expr, error) {
	switch x := e.(type) {
	case Select:
		return rewriteSelect(x, fn)
	case Agg:
		args, err := rewriteExprs(x.Args, fn)
		return Agg{Func: x.Func, Args: args}, err
	case Ifnull:
		inner, err := rewriteExpr(x.Expr, fn)
		return Ifnull{Expr: inner, Default: x.Default}, err
	case Binary:
		pair, err := rewriteExprs([]Expr{x.Left, x.Right}, fn)
		if err != nil {
			return nil, err
		}
		return Binary{Op: x.Op, Left: pair[0], Right: pair[1]}, nil
	case Unary:
		inner, err := rewriteExpr(x.X, fn)
		return Unary{X: inner}, err
	case Ref:
		return fn(x)
	}
	return e, nil
}

func rewriteCond(c Cond, fn func(Ref) (Ref, error)) (Cond, error) {
	switch x := c.(type) {
	case Or:
		l, r, err := rewritePair(x.Left, x.Right, fn)
		return Or{Left: l, Right: r}, err
	case And:
		l, r, err := rewritePair(x.Left, x.Right, fn)
		return And{Left: l, Right: r}, err
	case Not:
		inner, err := rewriteCond(x.Cond, fn)
		return Not{Cond: inner}, err
	case Compare:
		left, err := fn(x.Left)
		if err != nil {
			return nil, err
		}
		right, err := rewriteValue(x.Right, fn)
		return Compare{Left: left, Op: x.Op, Right: right}, err
	case In:
		left, err := fn(x.Left)
		if err != nil {
			return nil, err
		}
		out := In{Left: left, Not: x.Not, Values: make([]Value, len(x.Values))}
		for i, v := range x.Values {
			if out.Values[i], err = rewriteValue(v, fn); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return c, nil
}

func rewritePair(l, r Cond, fn func(Ref) (Ref, error)) (Cond, Cond, error) {
	l, err := rewriteCond(l, fn)
	if err != nil {
		return nil, nil, err
	}
	r, err = rewriteCond(r, fn)
	return l, r, err
}

func rewriteValue(v Value, fn func(Ref) (Ref, error)) (Value, error) {
	e, ok := v.(ElementRef)
	if !ok {
		return v, nil
	}
	obj, err := fn(e.Obj)
	if err != nil {
		return nil, err
	}
	if obj.URI == "" {
		return nil, fmt.Errorf("rewrite %s: an element must refer to its attribute by URI, not %s", e, obj)
	}
	return ElementRef{Obj: obj, ID: e.ID}, nil
}
