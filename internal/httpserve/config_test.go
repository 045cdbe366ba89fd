package httpserve

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestDefaultConfigIsValid(t *testing.T) {
	t.Parallel()
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"body", func(c *Config) { c.MaxBodyBytes = 1023 }, "maxBodyBytes: must be at least 1024, got 1023"},
		{"load", func(c *Config) { c.MaxLoadBytes = 0 }, "maxLoadBytes: must be at least 1024, got 0"},
		{"read header", func(c *Config) { c.ReadHeaderTimeout = 99 * time.Millisecond }, "readHeaderTimeout: must be at least 100ms, got 99ms"},
		{"read", func(c *Config) { c.ReadTimeout = 0 }, "readTimeout: must be at least 100ms, got 0s"},
		{"write", func(c *Config) { c.WriteTimeout = time.Millisecond }, "writeTimeout: must be at least 100ms, got 1ms"},
		{"idle", func(c *Config) { c.IdleTimeout = -time.Second }, "idleTimeout: must be at least 100ms, got -1s"},
		{"long", func(c *Config) { c.LongTimeout = 0 }, "longTimeout: must be at least 100ms, got 0s"},
		{"connections", func(c *Config) { c.MaxConnections = 7 }, "maxConnections: must be at least 8, got 7"},
		{"per client", func(c *Config) { c.MaxConnectionsPerClient = 0 }, "maxConnectionsPerClient: must be at least 1, got 0"},
		{"proxy", func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/8", "10.0.0.1"} },
			`trustedProxies[1]: "10.0.0.1" is not a network in CIDR form, such as 10.0.0.0/8`},
		{"cert alone", func(c *Config) { c.TLSCert = "x.pem" }, "tlsCert: tlsCert and tlsKey must be given together"},
		{"key alone", func(c *Config) { c.TLSKey = "x.key" }, "tlsCert: tlsCert and tlsKey must be given together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := DefaultConfig()
			tc.change(&c)
			if err := c.Validate(); err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
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
