package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Ping checks that the database answers reads and that the single writer can take the
// write lock: a read on the pool, then an empty immediate transaction on the writer.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if err := s.tx(ctx, func(*sql.Tx) error { return nil }); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// OutboxDepth counts the deliveries waiting to be published.
func (s *Store) OutboxDepth(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count outbox: %w", err)
	}
	return n, nil
}

// CountUnhealthy counts the subscriptions whose owners were told they keep failing.
func (s *Store) CountUnhealthy(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM subscription_state WHERE unhealthy = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count unhealthy subscriptions: %w", err)
	}
	return n, nil
}
