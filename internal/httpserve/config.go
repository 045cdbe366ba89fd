package httpserve

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Config is the http section of the configuration: the API's server.
type Config struct {
	// MaxBodyBytes caps request bodies. Default 1 MiB.
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// MaxLoadBytes caps the CSV body of a data load. Default 1 GiB.
	MaxLoadBytes int64 `yaml:"maxLoadBytes"`
	// TLSCert and TLSKey, when both set, serve HTTPS. Default empty (plain HTTP).
	TLSCert string `yaml:"tlsCert"`
	TLSKey  string `yaml:"tlsKey"`
	// ReadHeaderTimeout bounds how long a client may take to send headers. Default 10s.
	ReadHeaderTimeout time.Duration `yaml:"readHeaderTimeout"`
	// ReadTimeout bounds how long a client may take to send a whole request, body
	// included. Default 30s.
	ReadTimeout time.Duration `yaml:"readTimeout"`
	// WriteTimeout bounds how long the answer to one request may take to write. Default 2m.
	WriteTimeout time.Duration `yaml:"writeTimeout"`
	// IdleTimeout is how long a kept-alive connection may wait for its next request. Default 2m.
	IdleTimeout time.Duration `yaml:"idleTimeout"`
	// LongTimeout replaces the read and write timeouts on the routes that move big bodies:
	// data loads and export downloads. Default 1h.
	LongTimeout time.Duration `yaml:"longTimeout"`
	// MaxConnections caps the connections served at once; more wait to be accepted. Default 1024.
	MaxConnections int `yaml:"maxConnections"`
	// MaxConnectionsPerClient caps the connections one client address (an IPv6
	// client: its /64) holds at once; one more is closed as soon as it is
	// accepted. The trusted proxies' addresses are not capped: their
	// connections carry many clients. Default 64.
	MaxConnectionsPerClient int `yaml:"maxConnectionsPerClient"`
	// ShutdownTimeout bounds the graceful shutdown of the server. Default 15s.
	ShutdownTimeout time.Duration `yaml:"shutdownTimeout"`
	// TrustedProxies are the networks (CIDR) of reverse proxies whose X-Forwarded-For
	// names the client's address. Default none: the peer is the client.
	TrustedProxies []string `yaml:"trustedProxies"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MaxBodyBytes:            1 << 20,
		MaxLoadBytes:            1 << 30,
		ReadHeaderTimeout:       10 * time.Second,
		ReadTimeout:             30 * time.Second,
		WriteTimeout:            2 * time.Minute,
		IdleTimeout:             2 * time.Minute,
		LongTimeout:             time.Hour,
		MaxConnections:          1024,
		MaxConnectionsPerClient: 64,
		ShutdownTimeout:         15 * time.Second,
		TrustedProxies:          []string{},
	}
}

// Validate checks the section, naming the key within it.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.MaxBodyBytes < 1024 {
		bad("maxBodyBytes: must be at least 1024, got %d", c.MaxBodyBytes)
	}
	if c.MaxLoadBytes < 1024 {
		bad("maxLoadBytes: must be at least 1024, got %d", c.MaxLoadBytes)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"readHeaderTimeout", c.ReadHeaderTimeout}, {"readTimeout", c.ReadTimeout}, {"writeTimeout", c.WriteTimeout},
		{"idleTimeout", c.IdleTimeout}, {"longTimeout", c.LongTimeout}} {
		if d.v < 100*time.Millisecond {
			bad("%s: must be at least 100ms, got %s", d.key, d.v)
		}
	}
	if c.MaxConnections < 8 {
		bad("maxConnections: must be at least 8, got %d", c.MaxConnections)
	}
	if c.MaxConnectionsPerClient < 1 {
		bad("maxConnectionsPerClient: must be at least 1, got %d", c.MaxConnectionsPerClient)
	}
	for i, p := range c.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			bad("trustedProxies[%d]: %q is not a network in CIDR form, such as 10.0.0.0/8", i, p)
		}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("tlsCert: tlsCert and tlsKey must be given together")
	}
	return errors.Join(errs...)
}

// Proxies returns the networks of TrustedProxies, leaving out what Validate refuses.
func (c Config) Proxies() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range c.TrustedProxies {
		if n, err := netip.ParsePrefix(p); err == nil {
			out = append(out, n)
		}
	}
	return out
}
