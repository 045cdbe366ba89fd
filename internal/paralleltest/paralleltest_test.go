package paralleltest

import (
	"flag"
	"runtime"
	"testing"
)

func TestAtLeast(t *testing.T) {
	t.Parallel()
	many := runtime.GOMAXPROCS(0) + 7
	for _, tc := range []struct {
		name string
		args []string
		n    int
		want int
	}{
		{"raised when not given", nil, many, many},
		{"never below GOMAXPROCS", nil, 1, runtime.GOMAXPROCS(0)},
		{"kept when given", []string{"-test.parallel=3"}, many, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			p := fs.Int("test.parallel", runtime.GOMAXPROCS(0), "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			atLeast(fs, tc.n)
			if *p != tc.want {
				t.Errorf("-test.parallel %d, want %d", *p, tc.want)
			}
		})
	}
}
