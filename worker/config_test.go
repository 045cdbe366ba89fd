package worker

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := Config{SendTimeout: 10 * time.Second, Kinds: map[channels.Kind]KindConfig{"sms": {Rate: 2.5}}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Stream != DefaultStream || c.DedupeWindow != DefaultDedupeWindow || c.AckWait != DefaultAckWait ||
		c.MaxAttempts != DefaultMaxAttempts || c.BackoffBase != DefaultBackoffBase || c.Replicas != 1 {
		t.Errorf("defaults: %+v", c)
	}
	if k := c.kindConfig("email"); k.Concurrency != DefaultConcurrency || k.Rate != 0 || k.Burst != 1 || k.MaxPending != DefaultMaxPending {
		t.Errorf("a kind left out: %+v", k)
	}
	if k := c.Kinds["sms"]; k.Concurrency != 4 || k.Rate != 2.5 || k.Burst != 3 {
		t.Errorf("sms: %+v", k)
	}
}

func TestConfigInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "ack wait below a second", cfg: Config{AckWait: 500 * time.Millisecond}, want: "ack wait"},
		{name: "dedupe window beyond max age", cfg: Config{DedupeWindow: time.Hour, MaxAge: time.Minute}, want: "dedupe window"},
		{name: "cap below base", cfg: Config{BackoffBase: time.Minute, BackoffCap: time.Second}, want: "backoff cap"},
		{name: "negative attempts", cfg: Config{MaxAttempts: -1}, want: "negative"},
		{name: "negative concurrency", cfg: Config{Kinds: map[channels.Kind]KindConfig{"email": {Concurrency: -2}}}, want: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one about %q", err, tt.want)
			}
		})
	}
}
