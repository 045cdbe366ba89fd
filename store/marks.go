package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Marks are what a delivery leaves for the next run of its subscription to
// compare with, once it is sent: the digest of its message and files
// (sendWhen changed) and, per attachment that sends only new rows, the
// latest value of its attribute that it held (newRowsBy).
type Marks struct {
	Digest string
	// HighWater maps an attachment's key (see the engine) to the latest
	// value it held, a date as days since 1899-12-31.
	HighWater map[string]int64
}

// ChannelMark is what the last delivery sent to one channel of a
// subscription left: its instant and its marks.
type ChannelMark struct {
	At time.Time
	Marks
}

// insertMarks writes the marks of the deliveries that carry some.
func insertMarks(ctx context.Context, tx *sql.Tx, hs []handover) error {
	for _, h := range hs {
		if h.d.Marks == nil {
			continue
		}
		hw, err := json.Marshal(h.d.Marks.HighWater)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_marks(delivery_id, digest, high_water) VALUES (?, ?, ?)`,
			h.d.ID, h.d.Marks.Digest, string(hw)); err != nil {
			return fmt.Errorf("insert delivery marks: %w", err)
		}
	}
	return nil
}

// keepMarks makes the marks of the deliveries ids, just sent, the marks of
// their channels, unless a delivery of a later instant was sent there first.
func keepMarks(ctx context.Context, tx *sql.Tx, ids []string) error {
	for chunk := range slices.Chunk(ids, maxLedgerParams) {
		in, args := inList(chunk)
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_marks(subscription_id, channel_id, scheduled_at, digest, high_water)
			SELECT d.subscription_id, d.channel_id, d.scheduled_at, m.digest, m.high_water
			FROM delivery_marks m JOIN deliveries d ON d.id = m.delivery_id
			WHERE m.delivery_id IN `+in+`
			ON CONFLICT (subscription_id, channel_id) DO UPDATE SET scheduled_at = excluded.scheduled_at,
				digest = excluded.digest, high_water = excluded.high_water
			WHERE excluded.scheduled_at >= channel_marks.scheduled_at`, args...); err != nil {
			return fmt.Errorf("keep channel marks: %w", err)
		}
	}
	return nil
}

// ChannelMarks returns, by channel id, what the last delivery sent to each
// channel of subscription id left; a channel nothing with marks was sent to
// is left out.
func (s *Store) ChannelMarks(ctx context.Context, id string) (map[string]ChannelMark, error) {
	out := map[string]ChannelMark{}
	err := eachRow(ctx, s.r, func(r scanner) error {
		var ch, hw string
		var at int64
		var m ChannelMark
		if err := r.Scan(&ch, &at, &m.Digest, &hw); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(hw), &m.HighWater); err != nil {
			return fmt.Errorf("channel %s: high-water marks: %w", ch, err)
		}
		m.At = time.Unix(at, 0).UTC()
		out[ch] = m
		return nil
	}, `SELECT channel_id, scheduled_at, digest, high_water FROM channel_marks WHERE subscription_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("channel marks: %w", err)
	}
	return out, nil
}
