package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// User is a domain user (an account).
type User struct {
	ID            string
	Domain        string
	Login         string
	PasswordHash  string
	FirstName     string
	LastName      string
	Timezone      *string
	Country       *string
	PhoneNumber   string
	SSOProvider   string
	IsDomainAdmin bool
	IsService     bool // an account the service itself uses; never listed
	Created       time.Time
	Updated       time.Time
}

// ErrLastAdmin is returned when a change would leave a domain or project without an admin.
var ErrLastAdmin = errors.New("last admin")

// EnsureDomain creates the domain if it does not exist.
func (s *Store) EnsureDomain(ctx context.Context, name string, now time.Time) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO domains(name, created) VALUES (?, ?) ON CONFLICT DO NOTHING`, name, now.Unix())
	if err != nil {
		return fmt.Errorf("ensure domain: %w", err)
	}
	return nil
}

// DomainExists reports whether the domain exists.
func (s *Store) DomainExists(ctx context.Context, name string) (bool, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM domains WHERE name = ?`, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("domain exists: %w", err)
	}
	return n > 0, nil
}

// CountUsers returns how many accounts exist, service accounts included.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// CreateUser inserts u. A login that is taken (case-insensitively) gives ErrConflict.
func (s *Store) CreateUser(ctx context.Context, u User) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO users(id, domain, login, password_hash, first_name, last_name,
		timezone, country, phone_number, sso_provider, is_domain_admin, is_service, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Domain, u.Login, u.PasswordHash, u.FirstName, u.LastName, u.Timezone, u.Country,
		u.PhoneNumber, u.SSOProvider, boolInt(u.IsDomainAdmin), boolInt(u.IsService), u.Created.Unix(), u.Updated.Unix())
	if isUnique(err) {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

const userColumns = `id, domain, login, password_hash, first_name, last_name, timezone, country,
	phone_number, sso_provider, is_domain_admin, is_service, created, updated`

func scanUser(row scanner) (User, error) {
	var u User
	var created, updated int64
	err := row.Scan(&u.ID, &u.Domain, &u.Login, &u.PasswordHash, &u.FirstName, &u.LastName, &u.Timezone,
		&u.Country, &u.PhoneNumber, &u.SSOProvider, &u.IsDomainAdmin, &u.IsService, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("scan user: %w", err)
	}
	u.Created, u.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	return u, nil
}

// UserByID returns the user with the given id.
func (s *Store) UserByID(ctx context.Context, id string) (User, error) {
	return scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
}

// UserByLogin returns the user with the given login, compared case-insensitively.
func (s *Store) UserByLogin(ctx context.Context, login string) (User, error) {
	return scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE login = ?`, login))
}

// ListDomainUsers returns a page of the domain's users (service accounts left out)
// in creation order, optionally filtered by login, with the total count.
func (s *Store) ListDomainUsers(ctx context.Context, domain, login string, offset, limit int) ([]User, int, error) {
	where := `domain = ? AND is_service = 0`
	args := []any{domain}
	if login != "" {
		where += ` AND login = ?`
		args = append(args, login)
	}
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count domain users: %w", err)
	}
	users, err := queryAll(ctx, s.r, scanUser, `SELECT `+userColumns+` FROM users WHERE `+where+
		` ORDER BY created, rowid LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list domain users: %w", err)
	}
	return users, total, nil
}

// DeleteUser removes the user, their sessions and their project memberships.
// Deleting the last admin of a domain gives ErrLastAdmin.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	defer s.projectsChanged() // the user's memberships go with them
	return s.tx(ctx, func(tx *sql.Tx) error {
		var domain string
		var admin bool
		err := tx.QueryRowContext(ctx, `SELECT domain, is_domain_admin FROM users WHERE id = ?`, id).Scan(&domain, &admin)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		if admin {
			var admins int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE domain = ? AND is_domain_admin = 1 AND is_service = 0`,
				domain).Scan(&admins); err != nil {
				return fmt.Errorf("count admins: %w", err)
			}
			if admins <= 1 {
				return ErrLastAdmin
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		return nil
	})
}

// SetPassword replaces the user's password hash.
func (s *Store) SetPassword(ctx context.Context, id, hash string, now time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE users SET password_hash = ?, updated = ? WHERE id = ?`, hash, now.Unix(), id)
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return affected(res)
}

func affected(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
