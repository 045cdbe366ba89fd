package analytics

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/analytics/maql"
)

// The categories an expression may name where.
var (
	attributeOrLabel = []string{string(ldm.KindAttribute), string(ldm.KindLabel)}
	factCategory     = []string{string(ldm.KindFact)}
	metricCategory   = []string{CategoryMetric}
)

// syntaxError turns a MAQL syntax error in a field into an InputError.
func syntaxError(field string, err error) error {
	var perr *maql.Error
	if errors.As(err, &perr) {
		near := ""
		if perr.Token != "" {
			near = fmt.Sprintf(" near %q", perr.Token)
		}
		return invalid(field, "syntax error at line %d, column %d%s: %s", perr.Line, perr.Col, near, perr.Msg)
	}
	return invalid(field, "%v", err)
}

// maxExpression bounds a metric's MAQL expression, in bytes.
const maxExpression = 16 << 10

// prepareMetric parses a metric, checks every object it names and rewrites identifiers
// to URIs. self is the metric being replaced (0 on create): it must not end up using itself.
func (s *Service) prepareMetric(ctx context.Context, pid string, self int64, c *MetricContent) (MetricContent, []int64, error) {
	field := CategoryMetric + ".content.expression"
	if strings.TrimSpace(c.Expression) == "" {
		return MetricContent{}, nil, invalid(field, "is required")
	}
	if len(c.Expression) > maxExpression {
		return MetricContent{}, nil, invalid(field, "is %d bytes long; a metric's expression may be at most %d KiB (use metrics in metrics)",
			len(c.Expression), maxExpression>>10)
	}
	m, err := maql.ParseMetric(c.Expression)
	if err != nil {
		return MetricContent{}, nil, syntaxError(field, err)
	}
	r, err := s.resolve(ctx, pid, m.Refs())
	if err != nil {
		return MetricContent{}, nil, err
	}
	if err := (&exprChecker{refs: r}).sel(m.Root); err != nil {
		return MetricContent{}, nil, invalid(field, "%v", err)
	}
	if err := s.checkCycle(ctx, pid, self, r); err != nil {
		return MetricContent{}, nil, invalid(field, "%v", err)
	}
	if err := m.Rewrite(r.uri); err != nil {
		return MetricContent{}, nil, invalid(field, "%v", err)
	}
	out := MetricContent{Expression: m.String(), Format: c.Format, Tree: m.Tree()}
	if out.Format == "" {
		out.Format = "#,##0.00"
	}
	return out, r.ids(), nil
}

// checkCycle fails when a metric the expression uses is self or uses self.
func (s *Service) checkCycle(ctx context.Context, pid string, self int64, r *refs) error {
	if self == 0 {
		return nil
	}
	for ref, o := range r.objs {
		if o.Category != CategoryMetric {
			continue
		}
		if o.ID == self {
			return fmt.Errorf("%s is this metric; a metric cannot use itself", ref)
		}
		uses, err := s.store.Uses(ctx, pid, o.ID, true)
		if err != nil {
			return err
		}
		for _, u := range uses {
			if u.ID == self {
				return fmt.Errorf("%s uses this metric; a metric cannot use itself", ref)
			}
		}
	}
	return nil
}

// exprChecker checks that every object of a metric or filter stands where it may: facts
// inside SUM, AVG, MIN, MAX and MEDIAN, attributes and labels in COUNT, conditions and
// BY, metrics elsewhere in an expression.
type exprChecker struct {
	refs *refs
}

func (c *exprChecker) sel(s maql.Select) error {
	if err := c.expr(s.Expr, ""); err != nil {
		return err
	}
	if s.Where != nil {
		if err := c.cond(s.Where); err != nil {
			return err
		}
	}
	for _, ref := range append(append([]maql.Ref{}, s.By.Attrs...), s.By.All...) {
		if _, err := c.refs.want(ref, "an attribute or label to aggregate by", attributeOrLabel...); err != nil {
			return err
		}
	}
	return nil
}

// expr checks an expression; agg is the aggregation it is inside of, "" outside.
func (c *exprChecker) expr(e maql.Expr, agg string) error {
	switch x := e.(type) {
	case maql.Select:
		if agg != "" {
			return fmt.Errorf("%s cannot aggregate a sub-select", agg)
		}
		return c.sel(x)
	case maql.Agg:
		if agg != "" {
			return fmt.Errorf("%s cannot be inside %s", x.Func, agg)
		}
		if x.Func == maql.FuncCount {
			for _, arg := range x.Args {
				ref, ok := arg.(maql.Ref)
				if !ok {
					return fmt.Errorf("COUNT counts the elements of attributes; give it attributes")
				}
				if _, err := c.refs.want(ref, "an attribute to count", attributeOrLabel...); err != nil {
					return err
				}
			}
			return nil
		}
		for _, arg := range x.Args {
			if err := c.expr(arg, x.Func); err != nil {
				return err
			}
		}
	case maql.Ifnull:
		return c.expr(x.Expr, agg)
	case maql.Binary:
		if err := c.expr(x.Left, agg); err != nil {
			return err
		}
		return c.expr(x.Right, agg)
	case maql.Unary:
		return c.expr(x.X, agg)
	case maql.Ref:
		if agg != "" {
			_, err := c.refs.want(x, "a fact to aggregate with "+agg, factCategory...)
			return err
		}
		o, err := c.refs.get(x)
		if err != nil {
			return err
		}
		switch o.Category {
		case CategoryMetric:
			return nil
		case string(ldm.KindFact):
			return fmt.Errorf("%s is %s; aggregate it, as in SUM(%[1]s)", x, describe(o))
		case string(ldm.KindAttribute), string(ldm.KindLabel):
			return fmt.Errorf("%s is %s; count it, as in COUNT(%[1]s)", x, describe(o))
		}
		return fmt.Errorf("%s is %s, not a metric, fact or attribute", x, describe(o))
	}
	return nil
}

func (c *exprChecker) cond(cond maql.Cond) error {
	switch x := cond.(type) {
	case maql.And:
		if err := c.cond(x.Left); err != nil {
			return err
		}
		return c.cond(x.Right)
	case maql.Or:
		if err := c.cond(x.Left); err != nil {
			return err
		}
		return c.cond(x.Right)
	case maql.Not:
		return c.cond(x.Cond)
	case maql.Compare:
		_, err := c.refs.want(x.Left, "an attribute or label to compare", attributeOrLabel...)
		if err != nil {
			return err
		}
		return c.value(x.Left, x.Right)
	case maql.In:
		if _, err := c.refs.want(x.Left, "an attribute or label to filter by", attributeOrLabel...); err != nil {
			return err
		}
		for _, v := range x.Values {
			if err := c.value(x.Left, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// value checks that an element compared with an attribute is one of its elements.
func (c *exprChecker) value(left maql.Ref, v maql.Value) error {
	e, ok := v.(maql.ElementRef)
	if !ok {
		return nil
	}
	o, err := c.refs.want(e.Obj, "an attribute or label", attributeOrLabel...)
	if err != nil {
		return err
	}
	l, _ := c.refs.get(left)
	if c.refs.attributeOf(o) != c.refs.attributeOf(l) {
		return fmt.Errorf("element %s is an element of {%s}, not of {%s}", e, c.refs.attributeOf(o), c.refs.attributeOf(l))
	}
	return nil
}
