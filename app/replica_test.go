package app

import (
	"strings"
	"testing"
	"time"
)

// scaledOut is a control process's configuration on a NATS cluster with the
// JetStream ledger: what a replica needs.
func scaledOut() Config {
	c := DefaultConfig()
	c.Roles = []string{RoleAPI, RoleEngine}
	c.NATS.URL, c.NATS.Replicas, c.Delivery.Ledger = "nats://127.0.0.1:4222", 3, "jetstream"
	c.Replica.URL = "nats://127.0.0.1:4222/HERALD_REPLICA"
	return c
}

// TestReplicaConfigNamesTheKey: a replica.url that is not Litestream's form,
// or that the rest of the configuration cannot serve, and a sync interval
// out of bounds are refused, naming the key and why.
func TestReplicaConfigNamesTheKey(t *testing.T) {
	t.Parallel()
	if c := scaledOut(); c.Validate() != nil {
		err := c.Validate()
		t.Fatalf("a control process with a replica: %v", err)
	}
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"scheme", func(c *Config) { c.Replica.URL = "s3://bucket/x" }, "replica.url: \"s3://bucket/x\": the scheme must be nats"},
		{"credentials", func(c *Config) { c.Replica.URL = "nats://u:secret@h:4222/B" }, "replica.url: credentials do not go in the URL"},
		{"no bucket", func(c *Config) { c.Replica.URL = "nats://h:4222/" }, "replica.url: \"nats://h:4222/\": the bucket must be"},
		{"path", func(c *Config) { c.Replica.URL = "nats://h:4222/a/b" }, "the bucket must be one name"},
		{"no server", func(c *Config) { c.Replica.URL = "nats:///B" }, "names no server"},
		{"query", func(c *Config) { c.Replica.URL = "nats://h/B?x=1" }, "no query"},
		{"embedded nats", func(c *Config) { c.NATS.URL = "" }, "replica.url: needs nats.url"},
		{"sqlite ledger", func(c *Config) { c.Delivery.Ledger = "sqlite"; c.Roles = append(c.Roles, RoleWorker) }, "replica.url: needs delivery.ledger: jetstream"},
		{"worker", func(c *Config) { c.Roles = []string{RoleWorker}; c.Delivery.KeyFile = "k" }, "replica.url: only the control process"},
		{"sync interval", func(c *Config) { c.Replica.SyncInterval = time.Millisecond }, "replica.syncInterval: must be from 100ms to 1m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := scaledOut()
			tc.change(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error with %q", err, tc.want)
			}
		})
	}
	for raw, want := range map[string]replicaTarget{
		"nats://nats-1:4222/HERALD_REPLICA": {"nats://nats-1:4222", "HERALD_REPLICA"},
		"nats://nats/r":                     {"nats://nats:4222", "r"},
		"nats://[::1]:4223/r":               {"nats://[::1]:4223", "r"},
	} {
		if got, err := parseReplicaURL(raw); err != nil || got != want {
			t.Errorf("parse %q: %+v, %v; want %+v", raw, got, err, want)
		}
	}
}

// FuzzParseReplicaURL: no input panics, and what is taken is a nats server
// with a port and one bucket name.
func FuzzParseReplicaURL(f *testing.F) {
	for _, s := range []string{"nats://h:4222/B", "nats://u:p@h/B", "nats:///B", "nats://h/a/b", "%zz", "nats://[::1]/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := parseReplicaURL(raw)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got.Server, "nats://") || !bucketName.MatchString(got.Bucket) || strings.Contains(got.Server, "@") {
			t.Errorf("parse %q took %+v", raw, got)
		}
	})
}
