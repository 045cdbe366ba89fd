package httpserve

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/configtest"
)

// TestValidateNamesTheKey: the defaults are valid, and each value that
// makes no sense is refused naming its key.
func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	configtest.Check(t, DefaultConfig, Config.Validate,
		configtest.Bad("body", func(c *Config) { c.MaxBodyBytes = 1023 }, "maxBodyBytes: must be at least 1024, got 1023"),
		configtest.Bad("load", func(c *Config) { c.MaxLoadBytes = 0 }, "maxLoadBytes: must be at least 1024, got 0"),
		configtest.Bad("read header", func(c *Config) { c.ReadHeaderTimeout = 99 * time.Millisecond }, "readHeaderTimeout: must be at least 100ms, got 99ms"),
		configtest.Bad("read", func(c *Config) { c.ReadTimeout = 0 }, "readTimeout: must be at least 100ms, got 0s"),
		configtest.Bad("write", func(c *Config) { c.WriteTimeout = time.Millisecond }, "writeTimeout: must be at least 100ms, got 1ms"),
		configtest.Bad("idle", func(c *Config) { c.IdleTimeout = -time.Second }, "idleTimeout: must be at least 100ms, got -1s"),
		configtest.Bad("long", func(c *Config) { c.LongTimeout = 0 }, "longTimeout: must be at least 100ms, got 0s"),
		configtest.Bad("connections", func(c *Config) { c.MaxConnections = 7 }, "maxConnections: must be at least 8, got 7"),
		configtest.Bad("per client", func(c *Config) { c.MaxConnectionsPerClient = 0 }, "maxConnectionsPerClient: must be at least 1, got 0"),
		configtest.Bad("proxy", func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/8", "10.0.0.1"} },
			`trustedProxies[1]: "10.0.0.1" is not a network in CIDR form, such as 10.0.0.0/8`),
		configtest.Bad("cert alone", func(c *Config) { c.TLSCert = "x.pem" }, "tlsCert: tlsCert and tlsKey must be given together"),
		configtest.Bad("key alone", func(c *Config) { c.TLSKey = "x.key" }, "tlsCert: tlsCert and tlsKey must be given together"),
	)
}

func TestProxiesAreTheTrustedNetworks(t *testing.T) {
	t.Parallel()
	c := Config{TrustedProxies: []string{"10.0.0.0/8", "fd00::/8"}}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	if got := c.Proxies(); !slices.Equal(got, want) {
		t.Errorf("Proxies = %v, want %v", got, want)
	}
	if got := DefaultConfig().Proxies(); len(got) != 0 {
		t.Errorf("default Proxies = %v, want none", got)
	}
}
