package api

import (
	"errors"
	"fmt"
	"time"
)

// AuthConfig configures the two-token login: the auth section of the configuration.
type AuthConfig struct {
	// TTLifetime is how long a temporary token (SVCAuthTT) is valid. Default 10m.
	TTLifetime time.Duration `yaml:"ttLifetime"`
	// SSTLifetime is how long a super-secure token (SVCAuthSST) is valid. Default 336h (14 days).
	SSTLifetime time.Duration `yaml:"sstLifetime"`
	// PasswordCost is the bcrypt cost of stored password hashes. Default 10.
	PasswordCost int `yaml:"passwordCost"`
	// LoginFailuresFree is how many failed logins in a row one login may have
	// before further attempts are slowed down, with a delay that doubles up to
	// LoginDelayMax. Defaults 5 and 15m.
	LoginFailuresFree int           `yaml:"loginFailuresFree"`
	LoginDelayMax     time.Duration `yaml:"loginDelayMax"`
	// LoginFailuresCeiling is how many failed logins of one login, from all addresses
	// together, make attempts from addresses it never succeeded from wait too. Default 50.
	LoginFailuresCeiling int `yaml:"loginFailuresCeiling"`
}

// DefaultAuthConfig returns the documented defaults.
func DefaultAuthConfig() AuthConfig {
	return AuthConfig{TTLifetime: 10 * time.Minute, SSTLifetime: 14 * 24 * time.Hour, PasswordCost: 10,
		LoginFailuresFree: 5, LoginDelayMax: 15 * time.Minute, LoginFailuresCeiling: 50}
}

// Validate names the wrong key.
func (c AuthConfig) Validate() error {
	var errs []error
	if c.TTLifetime < time.Second {
		errs = append(errs, fmt.Errorf("ttLifetime: must be at least 1s, got %s", c.TTLifetime))
	}
	if c.SSTLifetime < c.TTLifetime {
		errs = append(errs, errors.New("sstLifetime: must not be shorter than ttLifetime"))
	}
	if c.PasswordCost < 4 || c.PasswordCost > 31 {
		errs = append(errs, fmt.Errorf("passwordCost: must be between 4 and 31, got %d", c.PasswordCost))
	}
	if c.LoginFailuresFree < 1 {
		errs = append(errs, errors.New("loginFailuresFree: must be at least 1"))
	}
	if c.LoginDelayMax < time.Second {
		errs = append(errs, fmt.Errorf("loginDelayMax: must be at least 1s, got %s", c.LoginDelayMax))
	}
	if c.LoginFailuresCeiling < 1 {
		errs = append(errs, fmt.Errorf("loginFailuresCeiling: must be at least 1, got %d", c.LoginFailuresCeiling))
	}
	return errors.Join(errs...)
}
