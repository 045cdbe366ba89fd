package cpuset

import "testing"

func TestSplitCheck(t *testing.T) {
	avail := []int{0, 1, 2, 3}
	for _, tc := range []struct {
		s  Split
		ok bool
	}{
		{Split{Server: []int{0}, Load: []int{1}}, true},
		{Split{Server: []int{0, 1}, Load: []int{1}}, false},
		{Split{Server: []int{0}, Load: []int{4}}, false},
		{Split{Server: []int{0}}, false},
	} {
		if err := tc.s.check(avail); (err == nil) != tc.ok {
			t.Errorf("%+v: check = %v", tc.s, err)
		}
	}
}
