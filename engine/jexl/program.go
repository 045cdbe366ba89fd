package jexl

import (
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

const (
	// maxNodes bounds the size of the expr syntax tree of one expression.
	maxNodes = 1000
	// memoryBudget bounds what one evaluation may allocate, in expr's own units.
	memoryBudget = 10_000
)

// Program is a compiled expression. It is immutable and safe for concurrent use.
type Program struct {
	prog *vm.Program
	tr   *translation
}

// CompileValue compiles an expression of any type, such as a part of a message template.
func CompileValue(src string) (*Program, error) { return CompileValueVars(src, nil) }

// CompileValueVars is CompileValue for an expression that may also read the
// text variables names (see Program.EvalVars).
func CompileValueVars(src string, names []string) (*Program, error) {
	tr, err := translateWith(src, names)
	if err != nil {
		return nil, err
	}
	prog, err := compile(tr)
	if err != nil {
		return nil, tr.exprError(err)
	}
	return &Program{prog: prog, tr: tr}, nil
}

// CompileCondition compiles an expression that must evaluate to true or false.
//
// As JEXL coerces strings, an expression that is nothing but the string literal "true" or
// "false" (in either kind of quotes) is that boolean. Any other expression must be of boolean
// type: comparisons, true, false and their combinations with and, or and not.
func CompileCondition(src string) (*Program, error) {
	tr, err := translate(src)
	if err != nil {
		return nil, err
	}
	if tr.literal != nil && (*tr.literal == "true" || *tr.literal == "false") {
		tr.source = *tr.literal
	}
	prog, err := compile(tr, expr.AsBool())
	if err == nil {
		return &Program{prog: prog, tr: tr}, nil
	}
	var fe *file.Error
	if !errors.As(err, &fe) {
		// The expression checked out but is not boolean: say what it is instead.
		if v, verr := compile(tr, expr.Optimize(false)); verr == nil {
			return nil, &Error{Pos: -1, Msg: "condition must be true or false, got " + typeName(v.Node().Type())}
		}
	}
	return nil, tr.exprError(err)
}

// compile does what expr.Compile does, with one step added between parsing and checking:
// % is rewritten to a call of modFunc, because expr's own % takes integers only. (Doing this
// with expr.Operator makes expr check the tree repeatedly, and the repeated check loses errors
// in nested calls such as max(abs()).)
func compile(tr *translation, opts ...expr.Option) (*vm.Program, error) {
	env := make(map[string]any, len(tr.vars)+len(tr.nameVars))
	for _, v := range tr.vars {
		env[v] = float64(0)
	}
	for _, v := range tr.nameVars {
		env[v] = ""
	}
	for _, v := range tr.prevVars {
		env[v] = float64(0) // checked as a number; null (nil) at run time at the first fire
	}
	config := conf.CreateNew()
	expr.Env(env)(config)
	for _, op := range baseOptions {
		op(config)
	}
	for _, op := range opts {
		op(config)
	}
	for name := range config.Disabled {
		delete(config.Builtins, name)
	}
	tree, err := parser.ParseWithConfig(tr.source, config)
	if err != nil {
		return nil, err
	}
	ast.Walk(&tree.Node, floatMod{})
	if _, err := checker.Check(tree, config); err != nil {
		return nil, err
	}
	if config.Optimize {
		if err := optimizer.Optimize(&tree.Node, config); err != nil {
			return nil, err
		}
	}
	return compiler.Compile(tree, config)
}

// floatMod replaces every % with a call of modFunc.
type floatMod struct{}

func (floatMod) Visit(node *ast.Node) {
	if b, ok := (*node).(*ast.BinaryNode); ok && b.Operator == "%" {
		callee := &ast.IdentifierNode{Value: modFunc}
		callee.SetLocation(b.Location())
		ast.Patch(node, &ast.CallNode{Callee: callee, Arguments: []ast.Node{b.Left, b.Right}})
	}
}

// Metrics returns the distinct metric URIs the expression reads, in order of first appearance.
func (p *Program) Metrics() []string {
	return append([]string(nil), p.tr.metrics...)
}

// Previous returns the distinct metric URIs the expression reads with
// f:previous, in order of first appearance.
func (p *Program) Previous() []string {
	return append([]string(nil), p.tr.prevs...)
}

// PreviousKey is the key of values (see Eval) under which the previous
// value of metric uri is given: NaN, or no key, when it has none.
func PreviousKey(uri string) string { return "previous " + uri }

// singleMetric reports the metric URI when the whole expression is one
// f:executeMetric or f:previous call.
func (p *Program) singleMetric() (string, bool) {
	id, ok := p.prog.Node().(*ast.IdentifierNode)
	switch {
	case !ok:
	case len(p.tr.vars) == 1 && len(p.tr.prevs) == 0 && id.Value == p.tr.vars[0]:
		return p.tr.metrics[0], true
	case len(p.tr.prevs) == 1 && len(p.tr.vars) == 0 && id.Value == p.tr.prevVars[0]:
		return p.tr.prevs[0], true
	}
	return "", false
}

// readsNullPrevious reports whether the expression reads a previous value
// that values does not hold.
func (p *Program) readsNullPrevious(values map[string]float64) bool {
	for _, uri := range p.tr.prevs {
		if v, ok := values[PreviousKey(uri)]; !ok || math.IsNaN(v) {
			return true
		}
	}
	return false
}

// ErrNoPrevious is the error of an evaluation that could not compute
// because a previous value it reads is null (at the subscription's first
// fire, or when the metric had no value then).
var ErrNoPrevious = errors.New("a previous value the expression reads is null")

// Eval evaluates the expression with values holding the value of each metric URI, and the
// previous value of each metric read with f:previous under PreviousKey (NaN or left out: null).
// The result is a float64, a string, a bool or, for a previous value that is null, nil. A
// metric without a value is an error naming its URI; an evaluation that fails on a null
// previous value is an error matching ErrNoPrevious.
func (p *Program) Eval(values map[string]float64) (any, error) { return p.EvalVars(values, nil) }

// EvalVars is Eval for an expression that reads text variables: vars holds
// the value of each.
func (p *Program) EvalVars(values map[string]float64, vars map[string]string) (any, error) {
	env := make(map[string]any, len(p.tr.vars)+len(p.tr.nameVars))
	for i, name := range p.tr.names {
		v, ok := vars[name]
		if !ok {
			return nil, &Error{Pos: -1, Msg: fmt.Sprintf("no value for %q", name)}
		}
		env[p.tr.nameVars[i]] = v
	}
	for i, uri := range p.tr.metrics {
		v, ok := values[uri]
		if !ok {
			return nil, &Error{Pos: p.tr.metricPos[i], Msg: fmt.Sprintf("no value for metric %q", uri)}
		}
		env[p.tr.vars[i]] = v
	}
	for i, uri := range p.tr.prevs {
		var prev any
		if v, ok := values[PreviousKey(uri)]; ok && !math.IsNaN(v) {
			prev = v
		}
		env[p.tr.prevVars[i]] = prev
	}
	machine := vm.VM{MemoryBudget: memoryBudget}
	out, err := machine.Run(p.prog, env)
	if err != nil {
		err = p.tr.exprError(err)
		if p.readsNullPrevious(values) {
			return nil, fmt.Errorf("%w: %w", ErrNoPrevious, err)
		}
		return nil, err
	}
	return out, nil
}

// EvalBool evaluates a condition; a result other than true or false is an error.
func (p *Program) EvalBool(values map[string]float64) (bool, error) {
	v, err := p.Eval(values)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, &Error{Pos: -1, Msg: "condition must be true or false, got " + kindName(v)}
	}
	return b, nil
}

// typeName names the static type of an expression for messages.
func typeName(t reflect.Type) string {
	if t == nil {
		return "a value of unknown type"
	}
	switch t.Kind() {
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	default:
		return "a value of unknown type"
	}
}
