package cron

import (
	"container/heap"
	"time"
)

// Zoned is a schedule read as wall-clock time in a location.
type Zoned struct {
	Schedule *Schedule
	Location *time.Location
}

// UnionGap returns the shortest real-time interval between two distinct consecutive instants at
// which any of the schedules fires, over the fires in [from, from+horizon), walking at most
// limit of them. Schedules that fire at the same instant count as one fire, as the scheduler
// runs a subscription once per instant.
//
// A single schedule's gap is known exactly from its fields (MinGap); where several schedules
// meet, their fires interleave in ways the fields alone do not tell, so UnionGap walks them.
// When the walk stops at limit rather than at the horizon, complete is false and the gap holds
// for the fires walked. It returns horizon when fewer than two instants are found.
func UnionGap(zs []Zoned, from time.Time, horizon time.Duration, limit int) (gap time.Duration, walked int, complete bool) {
	end := from.Add(horizon)
	h := make(fireHeap, 0, len(zs))
	for _, z := range zs {
		if t := z.Schedule.Next(from, z.Location); !t.IsZero() && t.Before(end) {
			h = append(h, fire{at: t, z: z})
		}
	}
	heap.Init(&h)
	gap = horizon
	var last time.Time
	for h.Len() > 0 {
		if walked == limit {
			return gap, walked, false
		}
		f := h[0]
		if !f.at.Equal(last) {
			if !last.IsZero() {
				gap = min(gap, f.at.Sub(last))
			}
			last = f.at
			walked++
		}
		if next := f.z.Schedule.Next(f.at, f.z.Location); !next.IsZero() && next.Before(end) {
			h[0].at = next
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return gap, walked, true
}

type fire struct {
	at time.Time
	z  Zoned
}

type fireHeap []fire

func (h fireHeap) Len() int           { return len(h) }
func (h fireHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h fireHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fireHeap) Push(x any)        { *h = append(*h, x.(fire)) }
func (h *fireHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
