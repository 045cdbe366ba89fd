package channeltest

import (
	"context"
	"fmt"
	"sync"
)

// inbox is what a peer received: an append-only list a test can wait on.
type inbox[T any] struct {
	mu      sync.Mutex
	items   []T
	changed chan struct{} // closed and replaced whenever items grows
}

// add appends the item build makes, which is given the item's number
// (1 for the first), and returns it.
func (b *inbox[T]) add(build func(n int) T) T {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := build(len(b.items) + 1)
	b.items = append(b.items, v)
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return v
}

// all returns the items so far, oldest first.
func (b *inbox[T]) all() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]T(nil), b.items...)
}

// await blocks until at least n items arrived, then returns them all, or
// returns ctx's error naming what it waited for.
func (b *inbox[T]) await(ctx context.Context, n int, what string) ([]T, error) {
	for {
		b.mu.Lock()
		if len(b.items) >= n {
			items := append([]T(nil), b.items...)
			b.mu.Unlock()
			return items, nil
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed, have := b.changed, len(b.items)
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("await %d %s, have %d: %w", n, what, have, ctx.Err())
		}
	}
}
