package gather

import (
	"slices"
	"testing"
)

func TestReady(t *testing.T) {
	t.Parallel()
	ch := make(chan int, 10)
	for i := range 5 {
		ch <- i
	}
	if got := Ready(ch, []int{-1}, 3); !slices.Equal(got, []int{-1, 0, 1}) {
		t.Errorf("up to n: got %v, want [-1 0 1]", got)
	}
	if got := Ready(ch, nil, 10); !slices.Equal(got, []int{2, 3, 4}) {
		t.Errorf("until empty: got %v, want [2 3 4]", got)
	}
	ch <- 5
	close(ch)
	if got := Ready(ch, nil, 10); !slices.Equal(got, []int{5}) {
		t.Errorf("until closed: got %v, want [5]", got)
	}
}
