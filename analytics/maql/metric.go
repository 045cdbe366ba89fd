package maql

import (
	"strconv"
	"strings"
)

// Metric is a parsed metric: SELECT expr [WHERE cond] [BY ...].
type Metric struct {
	Root Select
}

// Expr is an arithmetic expression: Select, Agg, Ifnull, Binary, Unary, Number or Ref.
type Expr interface{ exprNode() }

// Cond is a filter condition: Compare, In, Not, And or Or.
type Cond interface{ condNode() }

// Value is the right side of a comparison or an item of an IN list: Text, Number or
// ElementRef.
type Value interface{ valueNode() }

// Select is SELECT Expr WHERE Where BY By; at the top of a metric or as a sub-select
// "(SELECT ...)" inside an expression. Where is nil and By is zero when absent.
type Select struct {
	Expr  Expr
	Where Cond
	By    By
}

// By is the BY clause. Attrs sets the level of aggregation (BY {attr}); All lists attributes
// whose report breakdown is ignored (BY ALL {attr}); AllOther ignores every attribute of the
// report not listed (BY ALL IN ALL OTHER DIMENSIONS, also written BY ALL OTHER).
type By struct {
	Attrs    []Ref
	All      []Ref
	AllOther bool
}

// IsZero reports whether the clause is absent.
func (b By) IsZero() bool { return len(b.Attrs) == 0 && len(b.All) == 0 && !b.AllOther }

// Aggregation functions.
const (
	FuncSum    = "SUM"
	FuncAvg    = "AVG"
	FuncMin    = "MIN"
	FuncMax    = "MAX"
	FuncCount  = "COUNT"
	FuncMedian = "MEDIAN"
)

// maxArgs gives the aggregation functions and how many arguments each may take.
var maxArgs = map[string]int{
	FuncSum: 1, FuncAvg: 1, FuncMin: 1, FuncMax: 1, FuncMedian: 1,
	FuncCount: 2, // COUNT({attr}, {attr.in.other.dataset}) counts along that dataset
}

// Agg is an aggregation: Func is one of the Func constants, upper case; Args has one
// expression, or two for COUNT.
type Agg struct {
	Func string
	Args []Expr
}

// Ifnull is IFNULL(Expr, Default): Default replaces an empty result.
type Ifnull struct {
	Expr    Expr
	Default Number
}

// Binary is Left Op Right with Op one of + - * /.
type Binary struct {
	Op          string
	Left, Right Expr
}

// Unary is a negation: -X.
type Unary struct {
	X Expr
}

// Number is a numeric literal as written: digits with an optional fraction, with a leading
// minus sign where a literal may be negative (comparisons, IN lists, IFNULL defaults).
type Number struct {
	Lit string
}

// Float returns the value of the literal.
func (n Number) Float() float64 {
	f, _ := strconv.ParseFloat(n.Lit, 64)
	return f
}

// Ref refers to a metadata object by URI ([/svc/md/p/obj/1]) or by identifier ({fact.x});
// exactly one of the two is set. In an expression it is a fact, an attribute or a metric.
type Ref struct {
	URI        string
	Identifier string
}

func (r Ref) String() string {
	if r.URI != "" {
		return "[" + r.URI + "]"
	}
	return "{" + r.Identifier + "}"
}

// ElementRef is an attribute element, [<attribute or label URI>/elements?id=<ID>].
type ElementRef struct {
	Obj Ref // always a URI
	ID  int64
}

const elementsQuery = "/elements?"

// URI returns the element URI.
func (e ElementRef) URI() string {
	return e.Obj.URI + elementsQuery + "id=" + strconv.FormatInt(e.ID, 10)
}

func (e ElementRef) String() string { return "[" + e.URI() + "]" }

// Text is a string literal.
type Text struct {
	Value string
}

// Comparison operators.
const (
	OpEq = "="
	OpNe = "<>"
	OpLt = "<"
	OpGt = ">"
	OpLe = "<="
	OpGe = ">="
)

// Compare is Left Op Right, Left an attribute or a label.
type Compare struct {
	Left  Ref
	Op    string
	Right Value
}

// In is Left IN (Values...), or Left NOT IN (...) when Not is set.
type In struct {
	Left   Ref
	Not    bool
	Values []Value
}

// Not is NOT Cond.
type Not struct {
	Cond Cond
}

// And is Left AND Right.
type And struct {
	Left, Right Cond
}

// Or is Left OR Right.
type Or struct {
	Left, Right Cond
}

func (Select) exprNode() {}
func (Agg) exprNode()    {}
func (Ifnull) exprNode() {}
func (Binary) exprNode() {}
func (Unary) exprNode()  {}
func (Number) exprNode() {}
func (Ref) exprNode()    {}

func (Compare) condNode() {}
func (In) condNode()      {}
func (Not) condNode()     {}
func (And) condNode()     {}
func (Or) condNode()      {}

func (Text) valueNode()       {}
func (Number) valueNode()     {}
func (ElementRef) valueNode() {}

// validURI reports whether u can be written as the object URI [u].
func validURI(u string) bool {
	if !strings.HasPrefix(u, "/") || len(u) > maxURILen || strings.Contains(u, elementsQuery) {
		return false
	}
	for _, r := range u {
		if !isURIChar(r) {
			return false
		}
	}
	return true
}

// valid reports whether exactly one of URI and Identifier is set and it can be written back.
func (r Ref) valid() bool {
	if r.URI != "" {
		return r.Identifier == "" && validURI(r.URI)
	}
	return validIdent(r.Identifier)
}

// splitURI tells an object URI from an element URI. ok is false for a malformed element URI.
func splitURI(u string) (obj string, id int64, isElement, ok bool) {
	i := strings.LastIndex(u, elementsQuery)
	if i < 0 {
		return u, 0, false, true
	}
	obj, query := u[:i], u[i+len(elementsQuery):]
	digits, found := strings.CutPrefix(query, "id=")
	if !found || !validURI(obj) || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", 0, true, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return "", 0, true, false
	}
	return obj, id, true, true
}
