package app

import (
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/slack"
	"github.com/heraldhq/herald/channels/webhook"

	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExampleConfigDocumentsTheDefaults loads configs/herald.yaml over an
// empty configuration: it must set every key, to its default.
func TestExampleConfigDocumentsTheDefaults(t *testing.T) {
	t.Parallel()
	cfg := Config{Channels: map[string]channels.Settings{}}
	for key, s := range DefaultConfig().Channels { // each kind's section, empty
		cfg.Channels[key] = reflect.New(reflect.TypeOf(s).Elem()).Interface().(channels.Settings)
	}
	if err := LoadConfigFile(&cfg, filepath.Join("..", "configs", "herald.yaml")); err != nil {
		t.Fatal(err)
	}
	if want := DefaultConfig(); !reflect.DeepEqual(cfg, want) {
		t.Errorf("configs/herald.yaml differs from the defaults:\nfile     %+v\ndefaults %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the example does not validate: %v", err)
	}
}

func TestConfigFileErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, yaml, want string }{
		{"unknown key", "auth:\n  ttLifetim: 5m\n", `line 2: unknown key "auth.ttLifetim"`},
		{"wrong type", "auth:\n  ttLifetime: soon\n", "line 2: auth.ttLifetime:"},
		{"not a mapping", "auth: 5\n", "line 1: auth must be a mapping"},
		{"unknown section", "smtpp:\n  host: x\n", `unknown key "smtpp"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			err := LoadConfigFile(&cfg, path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(*Config)
		key    string
	}{
		{"listen", func(c *Config) { c.Listen = "nowhere" }, "listen"},
		{"tt lifetime", func(c *Config) { c.Auth.TTLifetime = 0 }, "auth.ttLifetime"},
		{"sst shorter than tt", func(c *Config) { c.Auth.SSTLifetime = time.Minute }, "auth.sstLifetime"},
		{"tls half", func(c *Config) { c.HTTP.TLSCert = "x.pem" }, "http.tlsCert"},
		{"connections per client", func(c *Config) { c.HTTP.MaxConnectionsPerClient = 0 }, "http.maxConnectionsPerClient"},
		{"secret key", func(c *Config) { c.Secrets.Key = "short" }, "secrets.key"},
		{"timezone", func(c *Config) { c.Subs.DefaultTimezone = "Mars/Base" }, "subscriptions.defaultTimezone"},
		{"link ttl", func(c *Config) { c.Subs.LinkTTL = time.Minute }, "subscriptions.linkTTL"},
		{"tls policy", func(c *Config) { smtpOf(c).TLSPolicy = "maybe" }, "smtp.tlsPolicy"},
		{"kind concurrency", func(c *Config) { smtpOf(c).Concurrency = 0 }, "smtp.concurrency"},
		{"mail files", func(c *Config) { smtpOf(c).MaxAttachmentBytes = 0 }, "smtp.maxAttachmentBytes"},
		{"slack files", func(c *Config) { c.Channels["slack"].(*slack.Settings).MaxAttachmentBytes = -1 }, "slack.maxAttachmentBytes"},
		{"webhook files", func(c *Config) { c.Channels["webhook"].(*webhook.Settings).MaxAttachmentBytes = 0 }, "webhook.maxAttachmentBytes"},
		{"backoff", func(c *Config) { c.Delivery.BackoffCap = time.Millisecond }, "delivery.backoffCap"},
		{"engine workers", func(c *Config) { c.Engine.Workers = 0 }, "engine.workers"},
		{"gc percent", func(c *Config) { c.Runtime.GCPercent = 0 }, "runtime.gcPercent"},
		{"send budget", func(c *Config) { c.Subs.SendNowPerHour = -1 }, "subscriptions.sendNowPerHour"},
		{"project send budget", func(c *Config) { c.Subs.ProjectSendNowPerHour = -1 }, "subscriptions.projectSendNowPerHour"},
		{"verification without a public URL", func(c *Config) { c.Delivery.VerifyRecipients = true }, "delivery.verifyRecipients"},
		{"trusted domain", func(c *Config) { c.Delivery.TrustedDomains = []string{"jane@example.com"} }, "delivery.trustedDomains[0]"},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "log.format"},
		{"access sample", func(c *Config) { c.Log.AccessSample = 2 }, "log.accessSample"},
		{"body bound", func(c *Config) { c.HTTP.MaxBodyBytes = 1 }, "http.maxBodyBytes"},
		{"trusted proxy", func(c *Config) { c.HTTP.TrustedProxies = []string{"10.0.0.1"} }, "http.trustedProxies[0]"},
		{"memory limit", func(c *Config) { c.Warehouse.MemoryLimit = "lots" }, "warehouse.memoryLimit"},
		{"warehouse threads", func(c *Config) { c.Warehouse.Threads = -1 }, "warehouse.threads"},
		{"export workers", func(c *Config) { c.Export.Workers = 0 }, "export.workers"},
		{"html rows", func(c *Config) { c.Export.HTMLRows = 0 }, "export.htmlRows"},
		{"export retention", func(c *Config) { c.Export.Retention = 0 }, "export.retention"},
		{"maintenance queue", func(c *Config) { c.Maint.Queue = 0 }, "maintenance.workers"},
		{"archive retention", func(c *Config) { c.Maint.ArchiveRetention = time.Second }, "maintenance.archiveRetention"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.change(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.key+":") {
				t.Fatalf("err = %v, want one naming %s", err, tc.key)
			}
		})
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	env := map[string]string{"HERALD_AUTH_TTLIFETIME": "5m", "HERALD_SMTP_HOST": "mail.example.com", "HERALD_SMTP_RATE": "2.5"}
	if err := ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.TTLifetime != 5*time.Minute || smtpOf(&cfg).Host != "mail.example.com" || smtpOf(&cfg).Rate != 2.5 {
		t.Errorf("after env: tt %s, smtp %q, rate %v", cfg.Auth.TTLifetime, smtpOf(&cfg).Host, smtpOf(&cfg).Rate)
	}
	env = map[string]string{"HERALD_AUTH_PASSWORDCOST": "high"}
	if err := ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err == nil ||
		!strings.Contains(err.Error(), "auth.passwordCost") {
		t.Errorf("bad integer: %v", err)
	}
}

func smtpOf(c *Config) *email.Settings { return c.Channels["smtp"].(*email.Settings) }

// TestMovedKeysSayWhereTheyWent: a file written for an earlier version names
// the key that took the old one's place.
func TestMovedKeysSayWhereTheyWent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.yaml")
	if err := os.WriteFile(path, []byte("delivery:\n  maxAttempts: 5\n  emailConcurrency: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	err := LoadConfigFile(&cfg, path)
	if err == nil || !strings.Contains(err.Error(), `line 3: key "delivery.emailConcurrency" is now "smtp.concurrency"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestFlagsOverrideTheirKeys(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	Flags{Data: "d", Listen: "127.0.0.1:8081", Roles: "api,engine", Metrics: "127.0.0.1:9181"}.Apply(&cfg)
	if cfg.Data != "d" || cfg.Listen != "127.0.0.1:8081" || !slices.Equal(cfg.Roles, []string{"api", "engine"}) || cfg.Metrics.Listen != "127.0.0.1:9181" {
		t.Errorf("data %q, listen %q, roles %q, metrics %q", cfg.Data, cfg.Listen, cfg.Roles, cfg.Metrics.Listen)
	}
	Flags{Metrics: "off"}.Apply(&cfg)
	if cfg.Metrics.Listen != "" {
		t.Errorf(`--metrics off leaves metrics.listen %q`, cfg.Metrics.Listen)
	}
	def := DefaultConfig()
	Flags{}.Apply(&def)
	if def.Metrics.Listen != DefaultConfig().Metrics.Listen || def.Listen != DefaultConfig().Listen {
		t.Errorf("no flags changed the defaults: %+v", def.Metrics)
	}
}
