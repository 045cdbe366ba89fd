package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/heraldhq/herald/analytics/export"
	"github.com/heraldhq/herald/analytics/maintenance"
	"github.com/heraldhq/herald/analytics/warehouse"
	"github.com/heraldhq/herald/analytics/xtab"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/engine"
	"github.com/heraldhq/herald/internal/httpserve"
	"github.com/heraldhq/herald/internal/logging"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/worker"
)

// Config is the whole configuration of one Herald process. Every key is
// documented, with its default, in configs/herald.yaml. Values come from the
// defaults, then the YAML file, then HERALD_* environment variables (the key
// path upper-cased and joined by underscores, e.g. HERALD_AUTH_TTLIFETIME),
// then command-line flags.
type Config struct {
	// Roles are what this process does (RoleAPI, RoleEngine, RoleWorker).
	// Default all three.
	Roles []string `yaml:"roles"`
	// Data is the folder that holds everything the service keeps. Default ./herald-data.
	Data string `yaml:"data"`
	// Listen is the address of the HTTP API. Default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// PublicURL is where people reach the service, such as
	// https://herald.example.com: the links in messages (unsubscribe,
	// downloads) are built on it. Default empty: messages carry no links.
	PublicURL string `yaml:"publicURL"`
	// Domain is the name of the default domain created at first start. Default "default".
	Domain string `yaml:"domain"`
	// AdminLogin is the login of the domain admin created at first start. Default admin@herald.local.
	AdminLogin string             `yaml:"adminLogin"`
	Log        logging.Config     `yaml:"log"`
	HTTP       httpserve.Config   `yaml:"http"`
	Auth       api.AuthConfig     `yaml:"auth"`
	Secrets    SecretsConfig      `yaml:"secrets"`
	Subs       notify.Config      `yaml:"subscriptions"`
	Engine     engine.Config      `yaml:"engine"`
	NATS       NATSConfig         `yaml:"nats"`
	Delivery   worker.Config      `yaml:"delivery"`
	Execution  xtab.Config        `yaml:"execution"`
	Export     export.Config      `yaml:"export"`
	Maint      maintenance.Config `yaml:"maintenance"`
	Metrics    MetricsConfig      `yaml:"metrics"`
	Warehouse  warehouse.Config   `yaml:"warehouse"`
	Runtime    RuntimeConfig      `yaml:"runtime"`
	Replica    ReplicaConfig      `yaml:"replica"`
	// Channels are the sections of the channel kinds, by their keys (smtp, sms,
	// feedChat, ...): each kind documents its own keys and defaults.
	Channels map[string]channels.Settings `yaml:"-"`
}

// Section returns the configuration section of a channel kind, linked to
// the sections it reads (see channels.Linked).
func (c *Config) Section(d *channels.Descriptor) channels.Settings {
	s := c.Channels[d.Section]
	if l, ok := s.(channels.Linked); ok {
		l.Link(func(key string) channels.Settings { return c.Channels[key] })
	}
	return s
}

// SecretsConfig configures how secrets are sealed at rest.
type SecretsConfig struct {
	// Key is the AES-256 key sealing channel passwords, 32 bytes in base64.
	// Default empty: a key is generated once into <data>/secret.key (mode 0600).
	Key string `yaml:"key"`
}

// DefaultConfig returns the configuration used when nothing else is given.
func DefaultConfig() Config {
	return Config{
		Roles:      []string{RoleAPI, RoleEngine, RoleWorker},
		Data:       "./herald-data",
		Listen:     "127.0.0.1:8080",
		Domain:     "default",
		AdminLogin: "admin@herald.local",
		Log:        logging.DefaultConfig(),
		HTTP:       httpserve.DefaultConfig(),
		Auth:       api.DefaultAuthConfig(),
		Subs:       notify.DefaultConfig(),
		Delivery:   worker.DefaultConfig(),
		Engine:     engine.DefaultConfig(),
		Execution:  xtab.DefaultConfig(),
		Export:     export.DefaultConfig(),
		Maint:      maintenance.DefaultConfig(),
		NATS:       NATSConfig{Replicas: 1},
		Metrics:    MetricsConfig{Listen: "127.0.0.1:9180"},
		Warehouse:  warehouse.DefaultConfig(),
		Runtime:    DefaultRuntimeConfig(),
		Replica:    DefaultReplicaConfig(),
		Channels:   sections(),
	}
}

// sections returns every channel kind's section with its defaults.
func sections() map[string]channels.Settings {
	out := make(map[string]channels.Settings, len(Kinds.All()))
	for _, d := range Kinds.All() {
		out[d.Section] = d.Settings()
	}
	return out
}

// LoadConfigFile reads a YAML file over cfg. Unknown keys and values of the
// wrong type are errors that name the key and its line.
func LoadConfigFile(cfg *Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file keeps the defaults
	}
	if err := decodeNode(doc.Content[0], reflect.ValueOf(cfg).Elem(), ""); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// decodeNode decodes a YAML mapping into the struct v, naming the full key of
// anything unknown or malformed.
func decodeNode(n *yaml.Node, v reflect.Value, prefix string) error {
	if v.Kind() != reflect.Struct {
		if err := n.Decode(v.Addr().Interface()); err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  ")
			msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", n.Line))
			return fmt.Errorf("line %d: %s: %s", n.Line, prefix, msg)
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s must be a mapping of keys", n.Line, orRoot(prefix))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		field, ok := fieldByTag(v, key.Value)
		if !ok && prefix == "" {
			field, ok = sectionOf(v, key.Value)
		}
		if to, moved := movedKeys[join(prefix, key.Value)]; !ok && moved {
			return fmt.Errorf("line %d: key %q is now %q", key.Line, join(prefix, key.Value), to)
		}
		if !ok {
			return fmt.Errorf("line %d: unknown key %q (known keys of %s: %s)", key.Line, join(prefix, key.Value),
				orRoot(prefix), strings.Join(knownKeys(v.Type()), ", "))
		}
		if err := decodeNode(val, field, join(prefix, key.Value)); err != nil {
			return err
		}
	}
	return nil
}

// movedKeys are keys of earlier versions and where they went, so that an old
// file's error says what to write instead.
var movedKeys = map[string]string{
	"engine.failuresBeforeNotice":  "subscriptions.failuresBeforeNotice",
	"delivery.emailConcurrency":    "smtp.concurrency",
	"delivery.smsConcurrency":      "sms.concurrency",
	"delivery.feedChatConcurrency": "feedChat.concurrency",
	"delivery.emailRate":           "smtp.rate",
	"delivery.smsRate":             "sms.rate",
	"delivery.feedChatRate":        "feedChat.rate",
	"delivery.replicas":            "nats.replicas",
}

// sectionOf returns the channel kind's section named name of the Config v.
func sectionOf(v reflect.Value, name string) (reflect.Value, bool) {
	cfg, ok := v.Addr().Interface().(*Config)
	if !ok {
		return reflect.Value{}, false
	}
	s, ok := cfg.Channels[name]
	if !ok {
		return reflect.Value{}, false
	}
	return reflect.ValueOf(s).Elem(), true
}

// inline reports whether struct field f is embedded with the yaml tag ",inline":
// its keys sit in the struct that embeds it.
func inline(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return opts == "inline" && f.Type.Kind() == reflect.Struct
}

func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if inline(t.Field(i)) {
			if f, ok := fieldByTag(v.Field(i), name); ok {
				return f, true
			}
			continue
		}
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func knownKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if inline(t.Field(i)) {
			keys = append(keys, knownKeys(t.Field(i).Type)...)
			continue
		}
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	if t == reflect.TypeFor[Config]() {
		for _, d := range Kinds.All() {
			keys = append(keys, d.Section)
		}
	}
	return keys
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func orRoot(prefix string) string {
	if prefix == "" {
		return "the configuration"
	}
	return prefix
}

// Flags are the serve command's flags that take the place of configuration
// keys, which they override: --data, --listen, --roles (comma-separated) and
// --metrics ("off" for none). An empty one leaves its key alone.
type Flags struct{ Data, Listen, Roles, Metrics string }

// Apply sets cfg's keys from the flags given.
func (f Flags) Apply(cfg *Config) {
	if f.Data != "" {
		cfg.Data = f.Data
	}
	if f.Listen != "" {
		cfg.Listen = f.Listen
	}
	if f.Roles != "" {
		cfg.Roles = strings.Split(f.Roles, ",")
	}
	switch f.Metrics {
	case "":
	case "off":
		cfg.Metrics.Listen = ""
	default:
		cfg.Metrics.Listen = f.Metrics
	}
}

// ApplyEnv overrides cfg from HERALD_* variables found by lookup.
func ApplyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	if err := applyEnv(reflect.ValueOf(cfg).Elem(), "HERALD", "", lookup); err != nil {
		return err
	}
	for _, d := range Kinds.All() {
		s := reflect.ValueOf(cfg.Channels[d.Section]).Elem()
		if err := applyEnv(s, "HERALD_"+strings.ToUpper(d.Section), d.Section, lookup); err != nil {
			return err
		}
	}
	return nil
}

func applyEnv(v reflect.Value, envPrefix, keyPrefix string, lookup func(string) (string, bool)) error {
	t := v.Type()
	for i := range t.NumField() {
		if inline(t.Field(i)) {
			if err := applyEnv(v.Field(i), envPrefix, keyPrefix, lookup); err != nil {
				return err
			}
			continue
		}
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		name := envPrefix + "_" + strings.ToUpper(tag)
		key := join(keyPrefix, tag)
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := applyEnv(f, name, key, lookup); err != nil {
				return err
			}
			continue
		}
		s, ok := lookup(name)
		if !ok {
			continue
		}
		if err := setScalar(f, s); err != nil {
			return fmt.Errorf("%s (%s): %w", name, key, err)
		}
	}
	return nil
}

func setScalar(f reflect.Value, s string) error {
	switch {
	case f.Type() == reflect.TypeFor[time.Duration]():
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q", s)
		}
		f.SetInt(int64(d))
	case f.Kind() == reflect.String:
		f.SetString(s)
	case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid integer %q", s)
		}
		f.SetInt(n)
	case f.Kind() == reflect.Float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("invalid number %q", s)
		}
		f.SetFloat(v)
	case f.Type() == reflect.TypeFor[[]string]():
		var list []string
		for item := range strings.SplitSeq(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		f.Set(reflect.ValueOf(list))
	case f.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("invalid boolean %q", s)
		}
		f.SetBool(b)
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}

// within prefixes every line of a section's errors with the section's key.
func within(section string, err error) error {
	if err == nil {
		return nil
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = section + "." + l
	}
	return errors.New(strings.Join(lines, "\n"))
}

// Validate checks values that parse but make no sense, naming the key.
func (c *Config) Validate() error {
	var errs []error
	bad := badKey(&errs)
	if c.Data == "" {
		bad("data", "must not be empty")
	}
	errs = append(errs, c.validateRoles(), c.validateReplica())
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%q is not host:port", c.Listen)
	}
	if err := notify.CheckPublicURL(c.PublicURL); err != nil {
		bad("publicURL", "%s", err)
	}
	if c.Delivery.VerifyRecipients && c.PublicURL == "" {
		bad("delivery.verifyRecipients", "needs publicURL, which the links of confirmation messages are built on")
	}
	if c.Domain == "" || strings.ContainsAny(c.Domain, "/ ") {
		bad("domain", "%q is not a valid domain name", c.Domain)
	}
	if !strings.Contains(c.AdminLogin, "@") {
		bad("adminLogin", "%q is not an e-mail address", c.AdminLogin)
	}
	errs = append(errs, within("log", c.Log.Validate()))
	if c.Metrics.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Metrics.Listen); err != nil {
			bad("metrics.listen", "%q is not host:port", c.Metrics.Listen)
		}
	}
	errs = append(errs, within("warehouse", c.Warehouse.Validate()), within("runtime", c.Runtime.Validate()))
	errs = append(errs, within("http", c.HTTP.Validate()), within("auth", c.Auth.Validate()))
	if c.Secrets.Key != "" {
		if _, err := secret.ParseKey(c.Secrets.Key); err != nil {
			bad("secrets.key", "%v", err)
		}
	}
	errs = append(errs, within("subscriptions", c.Subs.Validate()))
	for _, d := range Kinds.All() {
		if s, ok := c.Channels[d.Section]; ok {
			errs = append(errs, within(d.Section, s.Validate()))
		} else {
			bad(d.Section, "the section is missing")
		}
	}
	errs = append(errs, within("engine", c.Engine.Validate()), within("delivery", c.Delivery.Validate()),
		within("execution", c.Execution.Validate()), within("export", c.Export.Validate()),
		within("maintenance", c.Maint.Validate()))
	return errors.Join(errs...)
}

// badKey returns a function that adds to errs the error of one key.
func badKey(errs *[]error) func(key, format string, args ...any) {
	return func(key, format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
}
