package maql

import "fmt"

// Tree returns the metric as a tree of maps, slices and strings that encodes to JSON, to be
// stored beside the expression. Every node has a "type"; leaves carry a "value" and inner
// nodes their children in "content":
//
//	{"type":"metric","content":[{"type":"SELECT","content":[
//	  {"type":"function","value":"SUM","content":[{"type":"object","value":"/svc/md/p/obj/1"}]},
//	  {"type":"WHERE","content":[{"type":"=","content":[
//	    {"type":"identifier","value":"attr.status"},{"type":"string","value":"Open"}]}]}]}]}
//
// Other types: "+", "-", "*", "/" and "negation"; "number"; "element" (value: the element
// URI); "IN" and "NOT IN" (content: the attribute and a "list"); "AND", "OR", "NOT"; "BY"
// with attributes, "ALL" nodes and an "ALL IN ALL OTHER DIMENSIONS" node.
func (m *Metric) Tree() any {
	return node("metric", "", selectTree(m.Root))
}

func node(typ, value string, content ...any) map[string]any {
	n := map[string]any{"type": typ}
	if value != "" {
		n["value"] = value
	}
	if content != nil {
		n["content"] = content
	}
	return n
}

func selectTree(s Select) map[string]any {
	content := []any{exprTree(s.Expr)}
	if s.Where != nil {
		content = append(content, node("WHERE", "", condTree(s.Where)))
	}
	if !s.By.IsZero() {
		var items []any
		for _, r := range s.By.Attrs {
			items = append(items, refTree(r))
		}
		for _, r := range s.By.All {
			items = append(items, node("ALL", "", refTree(r)))
		}
		if s.By.AllOther {
			items = append(items, node("ALL IN ALL OTHER DIMENSIONS", ""))
		}
		content = append(content, node("BY", "", items...))
	}
	return node("SELECT", "", content...)
}

func refTree(r Ref) map[string]any {
	if r.URI != "" {
		return node("object", r.URI)
	}
	return node("identifier", r.Identifier)
}

func exprTree(e Expr) map[string]any {
	switch x := e.(type) {
	case Select:
		return selectTree(x)
	case Agg:
		args := make([]any, len(x.Args))
		for i, a := range x.Args {
			args[i] = exprTree(a)
		}
		return node("function", x.Func, args...)
	case Ifnull:
		return node("function", "IFNULL", exprTree(x.Expr), exprTree(x.Default))
	case Binary:
		return node(x.Op, "", exprTree(x.Left), exprTree(x.Right))
	case Unary:
		return node("negation", "", exprTree(x.X))
	case Number:
		return node("number", x.Lit)
	case Ref:
		return refTree(x)
	}
	panic(fmt.Sprintf("maql: unknown expression %T", e))
}

func condTree(c Cond) map[string]any {
	switch x := c.(type) {
	case Or:
		return node("OR", "", condTree(x.Left), condTree(x.Right))
	case And:
		return node("AND", "", condTree(x.Left), condTree(x.Right))
	case Not:
		return node("NOT", "", condTree(x.Cond))
	case Compare:
		return node(x.Op, "", refTree(x.Left), valueTree(x.Right))
	case In:
		vals := make([]any, len(x.Values))
		for i, v := range x.Values {
			vals[i] = valueTree(v)
		}
		op := "IN"
		if x.Not {
			op = "NOT IN"
		}
		return node(op, "", refTree(x.Left), node("list", "", vals...))
	}
	panic(fmt.Sprintf("maql: unknown condition %T", c))
}

func valueTree(v Value) map[string]any {
	switch x := v.(type) {
	case Text:
		n := node("string", "")
		n["value"] = x.Value // kept even when empty
		return n
	case Number:
		return node("number", x.Lit)
	case ElementRef:
		return node("element", x.URI())
	}
	panic(fmt.Sprintf("maql: unknown value %T", v))
}
