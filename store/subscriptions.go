package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Subscription is a user's subscription in a project.
type Subscription struct {
	ID        string
	ProjectID string
	Owner     string // user id
	Title     string
	Def       SubscriptionDef
	Enabled   bool
	Channels  []string // channel ids, in the order given
	Created   time.Time
	Updated   time.Time
}

// SubscriptionDef is what a subscription does, as it is stored.
type SubscriptionDef struct {
	Triggers    []Trigger          `json:"triggers"`
	Condition   string             `json:"condition"`
	Message     string             `json:"message"`
	Subject     string             `json:"subject,omitempty"`
	Attachments []ReportAttachment `json:"attachments,omitempty"`
	FireMode    string             `json:"fireMode"` // "always" or "onChange"
	// Resolved is the message template sent, with fire mode onChange, when the
	// condition turns from true back to false; empty: nothing is sent then.
	Resolved string `json:"resolved,omitempty"`
}

// Trigger is a cron schedule in a time zone.
type Trigger struct {
	Cron     string `json:"cron"`
	Timezone string `json:"timezone"`
}

// ReportAttachment asks for a report exported in the given formats.
type ReportAttachment struct {
	Report  string   `json:"report"`
	Formats []string `json:"formats"`
}

// Fire modes.
const (
	FireAlways   = "always"
	FireOnChange = "onChange"
)

// CreateSubscription stores sub with its channels, unless its owner in the project, or the
// project, already holds as many subscriptions as q allows (a *QuotaError).
func (s *Store) CreateSubscription(ctx context.Context, sub Subscription, q Quota) error {
	doc, err := json.Marshal(sub.Def)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := checkQuota(ctx, tx, "subscriptions per user", q.SubscriptionsPerUser,
			`SELECT count(*) FROM subscriptions WHERE project_id = ? AND owner = ?`, sub.ProjectID, sub.Owner); err != nil {
			return err
		}
		if err := checkQuota(ctx, tx, "subscriptions per project", q.SubscriptionsPerProject,
			`SELECT count(*) FROM subscriptions WHERE project_id = ?`, sub.ProjectID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO subscriptions(id, project_id, owner, title, doc, enabled, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, sub.ID, sub.ProjectID, sub.Owner, sub.Title, string(doc),
			boolInt(sub.Enabled), sub.Created.Unix(), sub.Updated.Unix())
		if err != nil {
			return fmt.Errorf("create subscription: %w", err)
		}
		return putSubscriptionChannels(ctx, tx, sub.ID, sub.Channels)
	})
}

func putSubscriptionChannels(ctx context.Context, tx *sql.Tx, id string, channels []string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM subscription_channels WHERE subscription_id = ?`, id); err != nil {
		return fmt.Errorf("subscription channels: %w", err)
	}
	for i, c := range channels {
		if _, err := tx.ExecContext(ctx, `INSERT INTO subscription_channels(subscription_id, channel_id, position)
			VALUES (?, ?, ?)`, id, c, i); err != nil {
			if isForeignKey(err) {
				return ErrNotFound
			}
			return fmt.Errorf("subscription channels: %w", err)
		}
	}
	return nil
}

// UpdateSubscription replaces the subscription's title, definition, state and channels.
func (s *Store) UpdateSubscription(ctx context.Context, sub Subscription) error {
	doc, err := json.Marshal(sub.Def)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE subscriptions SET title = ?, doc = ?, enabled = ?, updated = ? WHERE id = ?`,
			sub.Title, string(doc), boolInt(sub.Enabled), sub.Updated.Unix(), sub.ID)
		if err != nil {
			return fmt.Errorf("update subscription: %w", err)
		}
		if err := affected(res); err != nil {
			return err
		}
		return putSubscriptionChannels(ctx, tx, sub.ID, sub.Channels)
	})
}

// DeleteSubscription deletes the subscription and its runs.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM subscriptions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete subscription: %w", err)
	}
	return affected(res)
}

const subscriptionSelect = `SELECT s.id, s.project_id, s.owner, s.title, s.doc, s.enabled, s.created, s.updated,
	(SELECT group_concat(channel_id, ' ') FROM (SELECT channel_id FROM subscription_channels c
		WHERE c.subscription_id = s.id ORDER BY position))
	FROM subscriptions s`

func scanSubscription(row scanner) (Subscription, error) {
	var sub Subscription
	var doc string
	var channels sql.NullString
	var created, updated int64
	err := row.Scan(&sub.ID, &sub.ProjectID, &sub.Owner, &sub.Title, &doc, &sub.Enabled, &created, &updated, &channels)
	if errors.Is(err, sql.ErrNoRows) {
		return Subscription{}, ErrNotFound
	}
	if err != nil {
		return Subscription{}, fmt.Errorf("scan subscription: %w", err)
	}
	if err := json.Unmarshal([]byte(doc), &sub.Def); err != nil {
		return Subscription{}, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	sub.Channels = strings.Fields(channels.String)
	sub.Created, sub.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	return sub, nil
}

func (s *Store) querySubscriptions(ctx context.Context, where string, args ...any) ([]Subscription, error) {
	out, err := queryAll(ctx, s.r, scanSubscription, subscriptionSelect+" WHERE "+where+" ORDER BY s.created, s.rowid", args...)
	if err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	return out, nil
}

// SubscriptionByID returns the subscription with the given id.
func (s *Store) SubscriptionByID(ctx context.Context, id string) (Subscription, error) {
	return scanSubscription(s.r.QueryRowContext(ctx, subscriptionSelect+` WHERE s.id = ?`, id))
}

// Subscriptions lists a user's subscriptions in a project, oldest first.
func (s *Store) Subscriptions(ctx context.Context, projectID, owner string) ([]Subscription, error) {
	return s.querySubscriptions(ctx, `s.project_id = ? AND s.owner = ?`, projectID, owner)
}

// EnabledSubscriptions lists every enabled subscription of a project that is not deleted.
func (s *Store) EnabledSubscriptions(ctx context.Context) ([]Subscription, error) {
	return s.querySubscriptions(ctx, `s.enabled = 1 AND s.project_id IN (SELECT id FROM projects WHERE state <> 'DELETED')`)
}
