package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Channel is a user's channel configuration. Secret holds the sealed secret.
type Channel struct {
	ID      string
	Owner   string // user id
	Kind    string
	Title   string
	Config  json.RawMessage // the kind's configuration without its secret, a JSON object
	Secret  []byte          // sealed; nil when the kind has no secret
	Created time.Time
	Updated time.Time

	// Recipient is the address whose holder must confirm before the channel
	// sends (delivery.verifyRecipients); "" when none must.
	Recipient string
}

// InUseError is returned when a record cannot be deleted because others use it.
type InUseError struct {
	By []string // ids of the users
}

func (e *InUseError) Error() string { return fmt.Sprintf("in use by %v", e.By) }

// CreateChannel stores c, unless its owner already holds as many channels as q allows (a
// *QuotaError).
func (s *Store) CreateChannel(ctx context.Context, c Channel, q Quota) error {
	cfg := configOf(c)
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkQuota(ctx, tx, "channels per user", q.ChannelsPerUser,
			`SELECT count(*) FROM channels WHERE owner = ?`, c.Owner); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO channels(id, owner, kind, title, config, secret, recipient, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.Owner, c.Kind, c.Title, string(cfg), c.Secret, c.Recipient,
			c.Created.Unix(), c.Updated.Unix())
		if err != nil {
			return fmt.Errorf("create channel: %w", err)
		}
		return nil
	})
}

func configOf(c Channel) string {
	if len(c.Config) == 0 {
		return "{}"
	}
	return string(c.Config)
}

const channelColumns = `id, owner, kind, title, config, secret, recipient, created, updated`

func scanChannel(row scanner) (Channel, error) {
	var c Channel
	var cfg string
	var created, updated int64
	err := row.Scan(&c.ID, &c.Owner, &c.Kind, &c.Title, &cfg, &c.Secret, &c.Recipient, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Channel{}, ErrNotFound
	}
	if err != nil {
		return Channel{}, fmt.Errorf("scan channel: %w", err)
	}
	c.Config = json.RawMessage(cfg)
	c.Created, c.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	return c, nil
}

// ChannelByID returns the channel with the given id.
func (s *Store) ChannelByID(ctx context.Context, id string) (Channel, error) {
	return scanChannel(s.r.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels WHERE id = ?`, id))
}

// Channels lists the channels of a user, oldest first.
func (s *Store) Channels(ctx context.Context, owner string) ([]Channel, error) {
	out, err := queryAll(ctx, s.r, scanChannel, `SELECT `+channelColumns+` FROM channels WHERE owner = ? ORDER BY created, rowid`, owner)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return out, nil
}

// UpdateChannel replaces the channel's kind, title, config, secret and recipient.
func (s *Store) UpdateChannel(ctx context.Context, c Channel) error {
	cfg := configOf(c)
	res, err := s.w.ExecContext(ctx, `UPDATE channels SET kind = ?, title = ?, config = ?, secret = ?, recipient = ?, updated = ?
		WHERE id = ?`, c.Kind, c.Title, string(cfg), c.Secret, c.Recipient, c.Updated.Unix(), c.ID)
	if err != nil {
		return fmt.Errorf("update channel: %w", err)
	}
	return affected(res)
}

// DeleteChannel deletes the channel unless subscriptions use it (*InUseError).
func (s *Store) DeleteChannel(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT subscription_id FROM subscription_channels WHERE channel_id = ? ORDER BY 1`, id)
		if err != nil {
			return fmt.Errorf("delete channel: %w", err)
		}
		var users []string
		for rows.Next() {
			var sid string
			if err := rows.Scan(&sid); err != nil {
				rows.Close()
				return err
			}
			users = append(users, sid)
		}
		rows.Close()
		if len(users) > 0 {
			return &InUseError{By: users}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete channel: %w", err)
		}
		return affected(res)
	})
}
