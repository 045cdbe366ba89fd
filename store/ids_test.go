package store

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

var idForm = regexp.MustCompile(`^[0-9a-z]{24}$`)

func TestSortableIDsFollowTime(t *testing.T) {
	t.Parallel()
	// Instants whose base-36 milliseconds have 1 to 9 digits, and ones a
	// millisecond apart.
	var instants []time.Time
	for _, ms := range []int64{0, 35, 36, 1295, 1_764_000_000_000, 1_764_000_000_001, 2_821_109_907_455, 2_821_109_907_456, 99_999_999_999_999} {
		instants = append(instants, time.UnixMilli(ms))
	}
	var prev []string // the ids of the instant before
	for _, at := range instants {
		var ids []string
		for range 3 {
			id := newSortableID(at)
			if !idForm.MatchString(id) {
				t.Fatalf("id %q for %s: want 24 characters of [0-9a-z]", id, at)
			}
			for _, p := range prev {
				if id <= p {
					t.Errorf("id %q of %s sorts before %q of the instant before", id, at, p)
				}
			}
			ids = append(ids, id)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
			t.Errorf("ids of one millisecond repeat: %q", ids)
		}
		prev = ids
	}

	before := newSortableID(time.Now())
	id := NewSortableID()
	after := newSortableID(time.Now())
	if n := sortableTimeDigits; !idForm.MatchString(id) || id[:n] < before[:n] || id[:n] > after[:n] {
		t.Errorf("NewSortableID() = %q, want the millisecond of %q to %q", id, before[:n], after[:n])
	}
}

func TestRandomIDs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := NewID(24)
		if !idForm.MatchString(id) || seen[id] {
			t.Fatalf("NewID(24) = %q (seen before: %t)", id, seen[id])
		}
		seen[id] = true
	}
}
