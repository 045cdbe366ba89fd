package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Quota bounds how many subscriptions a user may hold in a project and a project in all, and
// how many channels a user may hold. A zero
// field bounds nothing. Creates check it in the transaction that inserts, on the one writer
// connection, so concurrent creates cannot pass it together.
type Quota struct {
	SubscriptionsPerUser    int
	SubscriptionsPerProject int
	ChannelsPerUser         int
}

// QuotaError is returned when a create would pass a bound of the Quota.
type QuotaError struct {
	What string // "subscriptions per user", "subscriptions per project" or "channels per user"
	Max  int
}

func (e *QuotaError) Error() string { return fmt.Sprintf("at most %d %s", e.Max, e.What) }

// checkQuota fails with a QuotaError when the count the query returns has reached max.
func checkQuota(ctx context.Context, tx *sql.Tx, what string, max int, query string, args ...any) error {
	if max <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return fmt.Errorf("count %s: %w", what, err)
	}
	if n >= max {
		return &QuotaError{What: what, Max: max}
	}
	return nil
}
