package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Recipient is an address an owner's channels send to, which its holder
// confirms before they do (delivery.verifyRecipients).
type Recipient struct {
	ID       string
	Owner    string // user id
	Kind     string
	Address  string
	Asked    time.Time // when the last confirmation went out; zero: none yet
	Verified time.Time // when its holder confirmed; zero: not yet
}

const recipientColumns = `id, owner, kind, address, asked, verified`

func scanRecipient(row scanner) (Recipient, error) {
	var r Recipient
	var asked, verified sql.NullInt64
	err := row.Scan(&r.ID, &r.Owner, &r.Kind, &r.Address, &asked, &verified)
	if errors.Is(err, sql.ErrNoRows) {
		return Recipient{}, ErrNotFound
	}
	if err != nil {
		return Recipient{}, fmt.Errorf("scan recipient: %w", err)
	}
	if asked.Valid {
		r.Asked = time.Unix(asked.Int64, 0).UTC()
	}
	if verified.Valid {
		r.Verified = time.Unix(verified.Int64, 0).UTC()
	}
	return r, nil
}

// EnsureRecipient returns the recipient (owner, kind, address), made with
// id when there was none.
func (s *Store) EnsureRecipient(ctx context.Context, owner, kind, address, id string) (Recipient, error) {
	if _, err := s.w.ExecContext(ctx, `INSERT INTO recipients(id, owner, kind, address) VALUES (?, ?, ?, ?)
		ON CONFLICT (owner, kind, address) DO NOTHING`, id, owner, kind, address); err != nil {
		return Recipient{}, fmt.Errorf("ensure recipient: %w", err)
	}
	return scanRecipient(s.w.QueryRowContext(ctx, `SELECT `+recipientColumns+` FROM recipients
		WHERE owner = ? AND kind = ? AND address = ?`, owner, kind, address))
}

// RecipientByID returns the recipient with the given id.
func (s *Store) RecipientByID(ctx context.Context, id string) (Recipient, error) {
	return scanRecipient(s.r.QueryRowContext(ctx, `SELECT `+recipientColumns+` FROM recipients WHERE id = ?`, id))
}

// Recipients lists the recipients of an owner.
func (s *Store) Recipients(ctx context.Context, owner string) ([]Recipient, error) {
	out, err := queryAll(ctx, s.r, scanRecipient, `SELECT `+recipientColumns+` FROM recipients WHERE owner = ?`, owner)
	if err != nil {
		return nil, fmt.Errorf("list recipients: %w", err)
	}
	return out, nil
}

// AskRecipient records that a confirmation goes out to recipient id at at.
// With first, only a recipient never asked is: it reports whether this call
// was the one that asked, so that of concurrent saves one sends.
func (s *Store) AskRecipient(ctx context.Context, id string, at time.Time, first bool) (bool, error) {
	q := `UPDATE recipients SET asked = ? WHERE id = ? AND verified IS NULL`
	if first {
		q += ` AND asked IS NULL`
	}
	res, err := s.w.ExecContext(ctx, q, at.Unix(), id)
	if err != nil {
		return false, fmt.Errorf("ask recipient: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UnaskRecipient undoes AskRecipient at at, when the confirmation did not go out.
func (s *Store) UnaskRecipient(ctx context.Context, id string, at, before time.Time) error {
	var prev any
	if !before.IsZero() {
		prev = before.Unix()
	}
	if _, err := s.w.ExecContext(ctx, `UPDATE recipients SET asked = ? WHERE id = ? AND asked = ?`, prev, id, at.Unix()); err != nil {
		return fmt.Errorf("unask recipient: %w", err)
	}
	return nil
}

// VerifyRecipient records that recipient id confirmed at at, and reports
// whether it had not before.
func (s *Store) VerifyRecipient(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE recipients SET verified = ? WHERE id = ? AND verified IS NULL`, at.Unix(), id)
	if err != nil {
		return false, fmt.Errorf("verify recipient: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ChannelRecipient is what decides whether a channel must wait for its
// recipient: its kind, configuration and the recipient it was saved with.
type ChannelRecipient struct {
	ID, Kind, Recipient string
	Config              []byte
}

// ChannelRecipients lists every channel of the kinds, for a check of their
// recipients under the configuration of the day.
func (s *Store) ChannelRecipients(ctx context.Context, kinds ...string) ([]ChannelRecipient, error) {
	var out []ChannelRecipient
	for _, k := range kinds {
		list, err := queryAll(ctx, s.r, func(row scanner) (ChannelRecipient, error) {
			var c ChannelRecipient
			err := row.Scan(&c.ID, &c.Kind, &c.Recipient, &c.Config)
			return c, err
		}, `SELECT id, kind, recipient, config FROM channels WHERE kind = ?`, k)
		if err != nil {
			return nil, fmt.Errorf("list channel recipients: %w", err)
		}
		out = append(out, list...)
	}
	return out, nil
}

// SetChannelRecipients sets the recipient of channels, id to address, in
// one transaction.
func (s *Store) SetChannelRecipients(ctx context.Context, set map[string]string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for id, r := range set {
			if _, err := tx.ExecContext(ctx, `UPDATE channels SET recipient = ? WHERE id = ?`, r, id); err != nil {
				return fmt.Errorf("set channel recipient: %w", err)
			}
		}
		return nil
	})
}
