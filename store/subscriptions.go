package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	// Paused are the channels this subscription does not send to, by channel
	// id; each is one of Channels.
	Paused map[string]Pause
	// Generations are the channels' generations other than 0, by channel id: a
	// channel's moves on each time it is resumed or added back, and an
	// unsubscribe link names the one it was made in.
	Generations map[string]int64
	Created     time.Time
	Updated     time.Time
}

// SubscriptionDef is what a subscription does, as it is stored.
type SubscriptionDef struct {
	Triggers  []Trigger `json:"triggers"`
	Condition string    `json:"condition"`
	Message   string    `json:"message"`
	// MessageHTML is the message as an HTML template; empty: the HTML part
	// shows Message as text.
	MessageHTML string             `json:"messageHtml,omitempty"`
	Subject     string             `json:"subject,omitempty"`
	Attachments []ReportAttachment `json:"attachments,omitempty"`
	FireMode    string             `json:"fireMode"` // "always" or "onChange"
	// Resolved is the message template sent, with fire mode onChange, when the
	// condition turns from true back to false; empty: nothing is sent then.
	Resolved string `json:"resolved,omitempty"`
	// OnEmpty is what a run whose reports have no rows does: OnEmptySend
	// (when empty), OnEmptySkip or OnEmptyNotifyOwner.
	OnEmpty string `json:"onEmpty,omitempty"`
	// SendWhen is SendAlways (when empty) or SendChanged: a run whose message
	// and files equal what was last sent to a channel sends nothing there.
	SendWhen string `json:"sendWhen,omitempty"`
}

// What a run whose reports have no rows does (SubscriptionDef.OnEmpty).
const (
	OnEmptySend        = "send"
	OnEmptySkip        = "skip"
	OnEmptyNotifyOwner = "notifyOwner"
)

// When a run sends (SubscriptionDef.SendWhen).
const (
	SendAlways  = "always"
	SendChanged = "changed"
)

// Trigger is a cron schedule in a time zone.
type Trigger struct {
	Cron     string `json:"cron"`
	Timezone string `json:"timezone"`
}

// ReportAttachment asks for a report exported in the given formats.
type ReportAttachment struct {
	Report  string   `json:"report"`
	Formats []string `json:"formats"`
	// NewRowsBy, when set, is a date attribute's URI: the report keeps only
	// the rows whose date is after the latest one the channel was last sent.
	NewRowsBy string `json:"newRowsBy,omitempty"`
}

// Pause is why a subscription stopped sending to one of its channels.
type Pause struct {
	By string    `json:"by"` // who asked: a recipient's address, or a user id
	At time.Time `json:"at"`
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
		return putSubscriptionChannels(ctx, tx, sub, true)
	})
}

// channelState is what putSubscriptionChannels keeps of a channel's row.
type channelState struct {
	paused     bool
	generation int64
}

// channelStates reads the channels subscription id sends to now, and the last
// generation of its sequence.
func channelStates(ctx context.Context, tx *sql.Tx, id string) (map[string]channelState, int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT channel_id, paused_at IS NOT NULL, generation FROM subscription_channels
		WHERE subscription_id = ?`, id)
	if err != nil {
		return nil, 0, fmt.Errorf("subscription channels: %w", err)
	}
	defer rows.Close()
	out := make(map[string]channelState)
	for rows.Next() {
		var cid string
		var st channelState
		if err := rows.Scan(&cid, &st.paused, &st.generation); err != nil {
			return nil, 0, fmt.Errorf("subscription channels: %w", err)
		}
		out[cid] = st
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("subscription channels: %w", err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT link_gen FROM subscriptions WHERE id = ?`, id).Scan(&seq); err != nil {
		return nil, 0, fmt.Errorf("subscription channels: %w", err)
	}
	return out, seq, nil
}

// putSubscriptionChannels replaces the channels of sub and their pauses. A
// channel that was paused and is not any more, or that the subscription did
// not send to before (unless it is new), moves on to the next generation of
// the subscription's sequence, which voids the unsubscribe links made before.
func putSubscriptionChannels(ctx context.Context, tx *sql.Tx, sub Subscription, created bool) error {
	old, seq, err := channelStates(ctx, tx, sub.ID)
	if err != nil {
		return err
	}
	next := seq
	if _, err := tx.ExecContext(ctx, `DELETE FROM subscription_channels WHERE subscription_id = ?`, sub.ID); err != nil {
		return fmt.Errorf("subscription channels: %w", err)
	}
	for i, c := range sub.Channels {
		var at sql.NullInt64
		p, paused := sub.Paused[c]
		if paused {
			at = sql.NullInt64{Int64: p.At.Unix(), Valid: true}
		}
		was, kept := old[c]
		gen := was.generation
		if (!kept && !created) || (was.paused && !paused) {
			next++
			gen = next
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO subscription_channels(subscription_id, channel_id, position,
			paused_at, paused_by, generation) VALUES (?, ?, ?, ?, ?, ?)`, sub.ID, c, i, at, p.By, gen); err != nil {
			if isForeignKey(err) {
				return ErrNotFound
			}
			return fmt.Errorf("subscription channels: %w", err)
		}
	}
	if next != seq {
		if _, err := tx.ExecContext(ctx, `UPDATE subscriptions SET link_gen = ? WHERE id = ?`, next, sub.ID); err != nil {
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
		return putSubscriptionChannels(ctx, tx, sub, false)
	})
}

// PauseChannel stops subscription id from sending to channel cid, for by at
// at, and notes it in the run whose message carried the request (runID; ""
// for none), if the channel is still in generation gen (the one the request
// was made in; ErrConflict otherwise). It reports false when the channel was
// paused already; a subscription that no longer sends to the channel gives
// ErrNotFound.
func (s *Store) PauseChannel(ctx context.Context, id, cid string, gen int64, runID, by string, at time.Time) (bool, error) {
	paused := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var was sql.NullInt64
		var now int64
		err := tx.QueryRowContext(ctx, `SELECT paused_at, generation FROM subscription_channels WHERE subscription_id = ? AND channel_id = ?`,
			id, cid).Scan(&was, &now)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err == nil && now != gen {
			return ErrConflict
		}
		if err != nil || was.Valid {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE subscription_channels SET paused_at = ?, paused_by = ?
			WHERE subscription_id = ? AND channel_id = ?`, at.Unix(), by, id, cid); err != nil {
			return fmt.Errorf("pause channel: %w", err)
		}
		paused = true
		if runID == "" {
			return nil
		}
		// json_insert appends to the run's list of events, making it when missing.
		_, err = tx.ExecContext(ctx, `UPDATE runs SET detail = json_insert(detail, '$.events[#]',
			json_object('event', 'unsubscribed', 'channel', ?, 'by', ?, 'at', ?)) WHERE id = ? AND subscription_id = ?`,
			cid, by, at.UTC().Format(time.RFC3339), runID, id)
		return err
	})
	return paused, err
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
		WHERE c.subscription_id = s.id ORDER BY position)),
	(SELECT json_group_object(channel_id, json_object('by', paused_by, 'at', paused_at)) FROM subscription_channels c
		WHERE c.subscription_id = s.id AND paused_at IS NOT NULL),
	(SELECT json_group_object(channel_id, generation) FROM subscription_channels c
		WHERE c.subscription_id = s.id AND generation <> 0)
	FROM subscriptions s`

func scanSubscription(row scanner) (Subscription, error) {
	var sub Subscription
	var doc string
	var channels, paused, gens sql.NullString
	var created, updated int64
	err := row.Scan(&sub.ID, &sub.ProjectID, &sub.Owner, &sub.Title, &doc, &sub.Enabled, &created, &updated, &channels, &paused, &gens)
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
	if sub.Paused, err = scanPauses(paused.String); err != nil {
		return Subscription{}, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	if gens.String != "" && gens.String != "{}" {
		if err := json.Unmarshal([]byte(gens.String), &sub.Generations); err != nil {
			return Subscription{}, fmt.Errorf("subscription %s: %w", sub.ID, err)
		}
	}
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

// SubscriptionsByID returns the subscriptions with the given ids, by id, in
// one read per 500; ids without a subscription are left out.
func (s *Store) SubscriptionsByID(ctx context.Context, ids []string) (map[string]Subscription, error) {
	out := make(map[string]Subscription, len(ids))
	for chunk := range slices.Chunk(ids, maxLedgerParams) {
		in, args := inList(chunk)
		subs, err := s.querySubscriptions(ctx, `s.id IN `+in, args...)
		if err != nil {
			return nil, err
		}
		for _, sub := range subs {
			out[sub.ID] = sub
		}
	}
	return out, nil
}

// Subscriptions lists a user's subscriptions in a project, oldest first.
func (s *Store) Subscriptions(ctx context.Context, projectID, owner string) ([]Subscription, error) {
	return s.querySubscriptions(ctx, `s.project_id = ? AND s.owner = ?`, projectID, owner)
}

// EnabledSubscriptions lists every enabled subscription of a project that is not deleted.
func (s *Store) EnabledSubscriptions(ctx context.Context) ([]Subscription, error) {
	return s.querySubscriptions(ctx, `s.enabled = 1 AND s.project_id IN (SELECT id FROM projects WHERE state <> 'DELETED')`)
}

// scanPauses decodes the JSON object of pauses by channel id that
// subscriptionSelect builds; "{}" or "" is nil.
func scanPauses(doc string) (map[string]Pause, error) {
	var raw map[string]struct {
		By string `json:"by"`
		At int64  `json:"at"`
	}
	if doc == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(doc), &raw); err != nil || len(raw) == 0 {
		return nil, err
	}
	out := make(map[string]Pause, len(raw))
	for c, p := range raw {
		out[c] = Pause{By: p.By, At: time.Unix(p.At, 0).UTC()}
	}
	return out, nil
}
