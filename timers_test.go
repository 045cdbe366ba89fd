package herald

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// timers are the functions of package time that wait. Outside the clock,
// code waits on the internal/clock.Clock it is given (docs/architecture.md).
var timers = []string{"NewTicker", "After", "NewTimer", "Tick", "AfterFunc", "Sleep"}

// mayWait are the folders whose code may call them: the clock itself, the
// benchmarks, and the test helpers that wait on processes and servers of
// their own (apptest's child processes, natstest's servers, the protocol fakes).
var mayWait = []string{"internal/clock", "bench", "app/apptest", "internal/natstest", "channels/channeltest", "channels/slack/slacktest"}

// TestNoTimerOutsideTheClock holds the rule of internal/clock: no non-test
// file outside mayWait calls time.NewTicker, After, NewTimer, Tick,
// AfterFunc or Sleep.
func TestNoTimerOutsideTheClock(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		slashed := filepath.ToSlash(p)
		if d.IsDir() {
			n := d.Name()
			if p != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") ||
				slices.ContainsFunc(mayWait, func(dir string) bool { return slashed == dir || strings.HasPrefix(slashed, dir+"/") }) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, use := range directTimers(fset, f) {
			t.Errorf("%s waits with %s: take the wait from the package's clock.Clock (internal/clock)", use.pos, use.call)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 200 {
		t.Fatalf("read %d files; is the walk right?", files)
	}
}

// timerUse is one reference to a timer of package time.
type timerUse struct {
	pos  token.Position
	call string // e.g. time.NewTicker
}

// directTimers returns f's references to timers, under whatever name f
// imports package time: calls and function values alike.
func directTimers(fset *token.FileSet, f *ast.File) []timerUse {
	var names []string
	for _, s := range f.Imports {
		if p, _ := strconv.Unquote(s.Path.Value); p == "time" {
			name := "time"
			if s.Name != nil {
				name = s.Name.Name
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	var out []timerUse
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(names, x.Name) && slices.Contains(timers, sel.Sel.Name) {
			out = append(out, timerUse{pos: fset.Position(sel.Pos()), call: fmt.Sprintf("time.%s", sel.Sel.Name)})
		}
		return true
	})
	return out
}

func TestADirectTimerIsFound(t *testing.T) {
	t.Parallel()
	const src = `package p

import (
	"time"
	tm "time"
)

func f(d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	<-tm.After(d)
	wait := time.Sleep
	wait(d)
	_ = time.Now()
	_ = time.Since(time.Now())
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range directTimers(fset, f) {
		got = append(got, fmt.Sprintf("%d:%s", u.pos.Line, u.call))
	}
	if want := []string{"9:time.NewTicker", "11:time.After", "12:time.Sleep"}; !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
