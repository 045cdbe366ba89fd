package maql

import "strings"

// Filter is a report filter: a condition on attributes, such as
// [/svc/md/p/obj/1] IN ([/svc/md/p/obj/1/elements?id=2]) AND {attr.status} <> "Closed".
type Filter struct {
	Cond Cond
}

// ParseFilter parses a filter condition: the language of a metric's WHERE clause. An error
// is an *Error naming the column and token where parsing stopped.
func ParseFilter(src string) (*Filter, error) {
	p := newParser(src, false)
	var f Filter
	err := p.run(func() {
		f.Cond = p.cond()
		if p.tok.kind != tokEOF {
			p.unexpected("end of input")
		}
	})
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// asMetric wraps the condition in a metric, so the walks of metrics serve filters too.
func (f *Filter) asMetric() *Metric {
	return &Metric{Root: Select{Expr: Number{Lit: "0"}, Where: f.Cond}}
}

// Refs returns every object the filter refers to, each once, in order of first appearance.
func (f *Filter) Refs() []Ref { return f.asMetric().Refs() }

// Rewrite replaces every reference r of the filter by fn(r), as Metric.Rewrite does.
func (f *Filter) Rewrite(fn func(Ref) (Ref, error)) error {
	m := f.asMetric()
	if err := m.Rewrite(fn); err != nil {
		return err
	}
	f.Cond = m.Root.Where
	return nil
}

// String returns the canonical MAQL text of the filter, which parses back to the same tree.
func (f *Filter) String() string {
	var b strings.Builder
	writeCond(&b, f.Cond, 0)
	return b.String()
}
