package jexl

import (
	"fmt"
	"math"

	"github.com/expr-lang/expr"
)

// function is a pure numeric function that expressions may call.
type function struct {
	call func(args ...any) (any, error)
	sig  any // a *func type describing the parameters to expr's checker
}

// funcs are the only functions an expression can call. All numbers are float64.
var funcs = map[string]*function{
	"abs":   unary("abs", math.Abs),
	"ceil":  unary("ceil", math.Ceil),
	"floor": unary("floor", math.Floor),
	"round": unary("round", math.Round), // half away from zero
	"min":   fold("min", math.Min),
	"max":   fold("max", math.Max),
}

// modFunc implements % on float64; compile rewrites every % to a call of it. The translator
// never lets an expression name it, so it is reachable through the operator only.
const modFunc = "mod_"

// baseOptions configure every compilation: no builtins, only funcs and modFunc, and a bound on
// the size of the syntax tree.
var baseOptions = func() []expr.Option {
	opts := []expr.Option{expr.DisableAllBuiltins(), expr.MaxNodes(maxNodes)}
	for name, f := range funcs {
		opts = append(opts, expr.Function(name, f.call, f.sig))
	}
	return append(opts, expr.Function(modFunc, binary("%", math.Mod), new(func(float64, float64) float64)))
}()

func unary(name string, fn func(float64) float64) *function {
	return &function{
		call: func(args ...any) (any, error) {
			xs, err := numbers(name, args)
			if err != nil {
				return nil, err
			}
			if len(xs) != 1 {
				return nil, fmt.Errorf("%s takes one number, got %d", name, len(xs))
			}
			return fn(xs[0]), nil
		},
		sig: new(func(float64) float64),
	}
}

func fold(name string, fn func(a, b float64) float64) *function {
	return &function{
		call: func(args ...any) (any, error) {
			xs, err := numbers(name, args)
			if err != nil {
				return nil, err
			}
			if len(xs) == 0 {
				return nil, fmt.Errorf("%s takes at least one number", name)
			}
			acc := xs[0]
			for _, x := range xs[1:] {
				acc = fn(acc, x)
			}
			return acc, nil
		},
		sig: new(func(float64, ...float64) float64),
	}
}

func binary(name string, fn func(a, b float64) float64) func(args ...any) (any, error) {
	return func(args ...any) (any, error) {
		xs, err := numbers(name, args)
		if err != nil {
			return nil, err
		}
		if len(xs) != 2 {
			return nil, fmt.Errorf("%s takes two numbers, got %d", name, len(xs))
		}
		return fn(xs[0], xs[1]), nil
	}
}

// numbers checks at run time what expr's checker already guarantees.
func numbers(name string, args []any) ([]float64, error) {
	xs := make([]float64, len(args))
	for i, a := range args {
		x, ok := a.(float64)
		if !ok {
			return nil, fmt.Errorf("%s takes numbers, got %s", name, kindName(a))
		}
		xs[i] = x
	}
	return xs, nil
}
