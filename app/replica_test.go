package app

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
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

// TestRetryFor: a restored process replays the delivery outcomes through a
// cluster that may answer "no responders" for a while: retryFor tries again,
// with a growing wait, until it succeeds or its bound passes, and then says
// what failed.
func TestRetryFor(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	noResponders := errors.New("nats: no responders available for request")
	synctest.Test(t, func(t *testing.T) {
		tries, began := 0, time.Now()
		err := retryFor(t.Context(), time.Minute, log, "replaying", func() error {
			if tries++; tries < 4 {
				return noResponders
			}
			return nil
		})
		if err != nil || tries != 4 {
			t.Errorf("retryFor = %v after %d tries, want nil after 4", err, tries)
		}
		if took := time.Since(began); took != 250*time.Millisecond+500*time.Millisecond+time.Second {
			t.Errorf("the tries took %v, want 1.75s of waits", took)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		tries, began := 0, time.Now()
		err := retryFor(t.Context(), 10*time.Second, log, "replaying", func() error { tries++; return noResponders })
		if !errors.Is(err, noResponders) || !strings.Contains(err.Error(), "replaying, tried for 10s") {
			t.Errorf("retryFor = %v, want the last error, saying what and for how long", err)
		}
		if took := time.Since(began); took > 10*time.Second || tries < 4 {
			t.Errorf("%d tries in %v, want the tries of 10s and no more", tries, took)
		}
	})
}
