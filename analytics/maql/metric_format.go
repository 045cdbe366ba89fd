package maql

import (
	"fmt"
	"strings"
)

// String returns the canonical MAQL text of the metric, which parses back to the same tree.
func (m *Metric) String() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	writeSelectBody(&b, m.Root)
	return b.String()
}

func writeSelectBody(b *strings.Builder, s Select) {
	writeExpr(b, s.Expr, 0)
	if s.Where != nil {
		b.WriteString(" WHERE ")
		writeCond(b, s.Where, 0)
	}
	if !s.By.IsZero() {
		b.WriteString(" BY ")
		writeBy(b, s.By)
	}
}

// Precedence of arithmetic: sums bind loosest, then products, then negation and operands.
const (
	precSum = iota + 1
	precProduct
	precOperand
)

func exprPrec(e Expr) int {
	if x, ok := e.(Binary); ok {
		if x.Op == "+" || x.Op == "-" {
			return precSum
		}
		return precProduct
	}
	return precOperand
}

// writeExpr writes e, in parentheses when its precedence is below least.
func writeExpr(b *strings.Builder, e Expr, least int) {
	if exprPrec(e) < least {
		b.WriteByte('(')
		writeExpr(b, e, 0)
		b.WriteByte(')')
		return
	}
	switch x := e.(type) {
	case Binary:
		prec := exprPrec(x)
		writeExpr(b, x.Left, prec)
		b.WriteString(" " + x.Op + " ")
		writeExpr(b, x.Right, prec+1) // the operators are left-associative
	case Unary:
		b.WriteByte('-')
		if _, ok := x.X.(Unary); ok {
			// "- -x": not "--x", which a script reads as a comment, and not
			// "-(-x)", whose parentheses nest deeper than the source did, so that
			// a canonical form could pass the parser's bound on nesting.
			b.WriteByte(' ')
		}
		writeExpr(b, x.X, precOperand)
	case Select:
		b.WriteString("(SELECT ")
		writeSelectBody(b, x)
		b.WriteByte(')')
	case Agg:
		b.WriteString(x.Func + "(")
		for i, a := range x.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, a, 0)
		}
		b.WriteByte(')')
	case Ifnull:
		b.WriteString("IFNULL(")
		writeExpr(b, x.Expr, 0)
		b.WriteString(", " + x.Default.Lit + ")")
	case Number:
		b.WriteString(x.Lit)
	case Ref:
		b.WriteString(x.String())
	default:
		panic(fmt.Sprintf("maql: unknown expression %T", e))
	}
}

// Precedence of conditions: OR binds loosest, then AND, then NOT and comparisons.
const (
	precOr = iota + 1
	precAnd
	precNot
)

func condPrec(c Cond) int {
	switch c.(type) {
	case Or:
		return precOr
	case And:
		return precAnd
	}
	return precNot
}

// writeCond writes c, in parentheses when its precedence is below least.
func writeCond(b *strings.Builder, c Cond, least int) {
	if condPrec(c) < least {
		b.WriteByte('(')
		writeCond(b, c, 0)
		b.WriteByte(')')
		return
	}
	switch x := c.(type) {
	case Or:
		writeCond(b, x.Left, precOr)
		b.WriteString(" OR ")
		writeCond(b, x.Right, precOr+1)
	case And:
		writeCond(b, x.Left, precAnd)
		b.WriteString(" AND ")
		writeCond(b, x.Right, precAnd+1)
	case Not:
		b.WriteString("NOT ")
		writeCond(b, x.Cond, precNot)
	case Compare:
		b.WriteString(x.Left.String() + " " + x.Op + " ")
		writeValue(b, x.Right)
	case In:
		b.WriteString(x.Left.String())
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		for i, v := range x.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValue(b, v)
		}
		b.WriteByte(')')
	default:
		panic(fmt.Sprintf("maql: unknown condition %T", c))
	}
}

func writeValue(b *strings.Builder, v Value) {
	switch x := v.(type) {
	case Text:
		b.WriteString(quote(x.Value))
	case Number:
		b.WriteString(x.Lit)
	case ElementRef:
		b.WriteString(x.String())
	default:
		panic(fmt.Sprintf("maql: unknown value %T", v))
	}
}

func writeBy(b *strings.Builder, by By) {
	var items []string
	for _, r := range by.Attrs {
		items = append(items, r.String())
	}
	for _, r := range by.All {
		items = append(items, "ALL "+r.String())
	}
	if by.AllOther {
		items = append(items, "ALL IN ALL OTHER DIMENSIONS")
	}
	b.WriteString(strings.Join(items, ", "))
}
