package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Session is one login: the super-secure token's record.
type Session struct {
	ID        string
	UserID    string
	TokenHash []byte
	UserAgent string
	Created   time.Time
	Expires   time.Time
	Revoked   bool
}

// Principal is who a valid temporary token speaks for.
type Principal struct {
	UserID        string
	SessionID     string
	Login         string
	Domain        string
	IsDomainAdmin bool
	IsService     bool
	Expires       time.Time // of the temporary token
}

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, se Session) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO sessions(id, user_id, token_hash, user_agent, created, expires)
		VALUES (?, ?, ?, ?, ?, ?)`, se.ID, se.UserID, se.TokenHash, se.UserAgent, se.Created.Unix(), se.Expires.Unix())
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// SessionByTokenHash returns the session whose SST hashes to hash.
func (s *Store) SessionByTokenHash(ctx context.Context, hash []byte) (Session, error) {
	var se Session
	var created, expires int64
	err := s.r.QueryRowContext(ctx, `SELECT id, user_id, token_hash, user_agent, created, expires, revoked
		FROM sessions WHERE token_hash = ?`, hash).
		Scan(&se.ID, &se.UserID, &se.TokenHash, &se.UserAgent, &created, &expires, &se.Revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("session by token: %w", err)
	}
	se.Created, se.Expires = time.Unix(created, 0).UTC(), time.Unix(expires, 0).UTC()
	return se, nil
}

// RevokeSession ends a session at once: it and its temporary tokens stop working.
func (s *Store) RevokeSession(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked = 1 WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("revoke session: %w", err)
		}
		if err := affected(res); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM temp_tokens WHERE session_id = ?`, id); err != nil {
			return fmt.Errorf("revoke session tokens: %w", err)
		}
		return nil
	})
}

// CreateTempToken stores a temporary token for a session.
func (s *Store) CreateTempToken(ctx context.Context, hash []byte, sessionID string, expires time.Time) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO temp_tokens(token_hash, session_id, expires) VALUES (?, ?, ?)`,
		hash, sessionID, expires.Unix())
	if err != nil {
		return fmt.Errorf("create temp token: %w", err)
	}
	return nil
}

// Authenticate resolves a temporary token's hash to its principal. The token,
// its session and the session's user must all be valid at now; otherwise
// ErrNotFound.
func (s *Store) Authenticate(ctx context.Context, hash []byte, now time.Time) (Principal, error) {
	var p Principal
	var expires int64
	err := s.r.QueryRowContext(ctx, `SELECT u.id, se.id, u.login, u.domain, u.is_domain_admin, u.is_service, t.expires
		FROM temp_tokens t JOIN sessions se ON se.id = t.session_id JOIN users u ON u.id = se.user_id
		WHERE t.token_hash = ? AND t.expires > ? AND se.revoked = 0 AND se.expires > ?`,
		hash, now.Unix(), now.Unix()).
		Scan(&p.UserID, &p.SessionID, &p.Login, &p.Domain, &p.IsDomainAdmin, &p.IsService, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, ErrNotFound
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p.Expires = time.Unix(expires, 0).UTC()
	return p, nil
}

// TempTokenOfLiveSession reports whether hash is a temporary token, expired or not, of a
// session that is still valid at now: whoever holds it needs a new temporary token, not
// a new login.
func (s *Store) TempTokenOfLiveSession(ctx context.Context, hash []byte, now time.Time) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM temp_tokens t JOIN sessions se ON se.id = t.session_id
		WHERE t.token_hash = ? AND se.revoked = 0 AND se.expires > ?`, hash, now.Unix()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("temp token session: %w", err)
	}
	return n > 0, nil
}

// PruneTokens deletes temporary tokens and sessions that expired before now.
func (s *Store) PruneTokens(ctx context.Context, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM temp_tokens WHERE expires <= ?`, now.Unix()); err != nil {
			return fmt.Errorf("prune temp tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires <= ? OR revoked = 1`, now.Unix()); err != nil {
			return fmt.Errorf("prune sessions: %w", err)
		}
		return nil
	})
}

// RevokeUserSessions ends every session of the user.
func (s *Store) RevokeUserSessions(ctx context.Context, userID string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM temp_tokens WHERE session_id IN
			(SELECT id FROM sessions WHERE user_id = ?)`, userID); err != nil {
			return fmt.Errorf("revoke user tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked = 1 WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("revoke user sessions: %w", err)
		}
		return nil
	})
}
