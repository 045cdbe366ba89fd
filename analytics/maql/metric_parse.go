package maql

import (
	"strconv"
	"strings"
)

// ParseMetric parses a metric expression, SELECT expr [WHERE cond] [BY ...], where WHERE and
// BY may come in either order. An error is an *Error naming the column and token where
// parsing stopped.
func ParseMetric(src string) (*Metric, error) {
	p := newParser(src, false)
	var m Metric
	err := p.run(func() {
		p.expectWord("SELECT")
		m.Root = p.selectBody()
		if p.tok.kind != tokEOF {
			p.unexpected("end of input")
		}
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// selectBody parses what follows SELECT.
func (p *parser) selectBody() Select {
	s := Select{Expr: p.expr()}
	for {
		switch {
		case s.Where == nil && p.acceptWord("WHERE"):
			s.Where = p.cond()
		case s.By.IsZero() && p.acceptWord("BY"):
			s.By = p.by()
		default:
			return s
		}
	}
}

func (p *parser) expr() Expr {
	p.enter()
	defer p.leave()
	x := p.term()
	for p.isPunct("+") || p.isPunct("-") {
		op := p.tok.text
		p.next()
		x = Binary{Op: op, Left: x, Right: p.term()}
	}
	return x
}

func (p *parser) term() Expr {
	x := p.unary()
	for p.isPunct("*") || p.isPunct("/") {
		op := p.tok.text
		p.next()
		x = Binary{Op: op, Left: x, Right: p.unary()}
	}
	return x
}

func (p *parser) unary() Expr {
	if p.acceptPunct("-") {
		p.enter()
		defer p.leave()
		return Unary{X: p.unary()}
	}
	return p.primary()
}

func (p *parser) primary() Expr {
	t := p.tok
	switch t.kind {
	case tokNumber:
		return p.signedNumber()
	case tokURI, tokIdent:
		return p.objectRef()
	case tokWord:
		name := strings.ToUpper(t.text)
		if n, ok := maxArgs[name]; ok {
			p.next()
			return Agg{Func: name, Args: p.args(n)}
		}
		if name == "IFNULL" {
			p.next()
			p.expectPunct("(")
			x := Ifnull{Expr: p.expr()}
			p.expectPunct(",")
			x.Default = p.signedNumber()
			p.expectPunct(")")
			return x
		}
	case tokPunct:
		if p.acceptPunct("(") {
			var x Expr
			if p.acceptWord("SELECT") {
				p.enter()
				x = p.selectBody()
				p.leave()
			} else {
				x = p.expr()
			}
			p.expectPunct(")")
			return x
		}
	}
	p.unexpected("a number, a reference, a function or (")
	return nil
}

// args parses the parenthesised arguments of an aggregation, one to limit of them.
func (p *parser) args(limit int) []Expr {
	p.expectPunct("(")
	args := []Expr{p.expr()}
	for len(args) < limit && p.acceptPunct(",") {
		args = append(args, p.expr())
	}
	p.expectPunct(")")
	return args
}

// objectRef consumes a reference to an object: a URI that is not an element, or an
// identifier.
func (p *parser) objectRef() Ref {
	t := p.tok
	switch t.kind {
	case tokIdent:
		p.next()
		return Ref{Identifier: t.text}
	case tokURI:
		if _, _, isElement, _ := splitURI(t.text); !isElement {
			p.next()
			return Ref{URI: t.text}
		}
	}
	p.unexpected("an object [URI] or {identifier}")
	return Ref{}
}

func (p *parser) signedNumber() Number {
	t := p.tok
	neg := p.acceptPunct("-")
	if p.tok.kind != tokNumber {
		p.unexpected("a number")
	}
	n := Number{Lit: p.tok.text}
	if neg {
		n.Lit = "-" + n.Lit
	}
	if _, err := strconv.ParseFloat(n.Lit, 64); err != nil {
		p.unexpectedAt(t, "a number in range")
	}
	p.next()
	return n
}

func (p *parser) cond() Cond {
	p.enter()
	defer p.leave()
	c := p.andCond()
	for p.acceptWord("OR") {
		c = Or{Left: c, Right: p.andCond()}
	}
	return c
}

func (p *parser) andCond() Cond {
	c := p.notCond()
	for p.acceptWord("AND") {
		c = And{Left: c, Right: p.notCond()}
	}
	return c
}

func (p *parser) notCond() Cond {
	if p.acceptWord("NOT") {
		p.enter()
		defer p.leave()
		return Not{Cond: p.notCond()}
	}
	if p.acceptPunct("(") {
		c := p.cond()
		p.expectPunct(")")
		return c
	}
	if p.tok.kind != tokURI && p.tok.kind != tokIdent {
		p.unexpected("a condition")
	}
	left := p.objectRef()
	switch {
	case p.acceptWord("IN"):
		return In{Left: left, Values: p.valueList()}
	case p.acceptWord("NOT"):
		p.expectWord("IN")
		return In{Left: left, Not: true, Values: p.valueList()}
	case p.tok.kind == tokPunct:
		switch op := p.tok.text; op {
		case OpEq, OpNe, OpLt, OpGt, OpLe, OpGe:
			p.next()
			return Compare{Left: left, Op: op, Right: p.value()}
		}
	}
	p.unexpected("=, <>, <, >, <=, >=, IN or NOT IN")
	return nil
}

func (p *parser) valueList() []Value {
	p.expectPunct("(")
	vals := []Value{p.value()}
	for p.acceptPunct(",") {
		vals = append(vals, p.value())
	}
	p.expectPunct(")")
	return vals
}

// value parses the right side of a comparison: a string, a number or an element URI.
func (p *parser) value() Value {
	t := p.tok
	switch t.kind {
	case tokString:
		p.next()
		return Text{Value: t.text}
	case tokNumber:
		return p.signedNumber()
	case tokPunct:
		if t.text == "-" {
			return p.signedNumber()
		}
	case tokURI:
		obj, id, isElement, ok := splitURI(t.text)
		if isElement && ok {
			p.next()
			return ElementRef{Obj: Ref{URI: obj}, ID: id}
		}
	}
	p.unexpected("a string, a number or an element [URI/elements?id=N]")
	return nil
}

func (p *parser) by() By {
	var b By
	for {
		if p.acceptWord("ALL") {
			switch {
			case p.acceptWord("IN"):
				p.expectWord("ALL")
				p.expectWord("OTHER")
				p.expectWord("DIMENSIONS")
				b.AllOther = true
			case p.acceptWord("OTHER"):
				p.acceptWord("DIMENSIONS")
				b.AllOther = true
			default:
				if p.tok.kind != tokURI && p.tok.kind != tokIdent {
					p.unexpected("IN ALL OTHER DIMENSIONS, OTHER or an attribute")
				}
				b.All = append(b.All, p.objectRef())
			}
		} else {
			b.Attrs = append(b.Attrs, p.objectRef())
		}
		if !p.acceptPunct(",") {
			return b
		}
	}
}
