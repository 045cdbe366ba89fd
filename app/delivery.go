package app

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/feedchat"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/worker"
)

// NATSConfig says where deliveries travel: an embedded server by default.
type NATSConfig struct {
	// URL of an external NATS cluster (comma-separated servers). Default
	// empty: an embedded server with its storage in <data>/nats.
	URL string `yaml:"url"`
	// CredsFile, CAFile, CertFile and KeyFile authenticate to an external cluster.
	CredsFile string `yaml:"credsFile"`
	CAFile    string `yaml:"caFile"`
	CertFile  string `yaml:"certFile"`
	KeyFile   string `yaml:"keyFile"`
	// Listen is where the embedded server accepts other processes (sender
	// nodes). Default empty: in-process only, no port.
	Listen string `yaml:"listen"`
}

// SMTPConfig configures e-mail delivery.
type SMTPConfig struct {
	// Host of the SMTP relay. Default empty: messages are written as .eml
	// files into <data>/outbox instead.
	Host string `yaml:"host"`
	// Port of the relay. Default 587.
	Port int `yaml:"port"`
	// TLSPolicy is mandatory, opportunistic or none. Default mandatory.
	TLSPolicy string `yaml:"tlsPolicy"`
	// Username and Password authenticate to the relay. Default none.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// From is the sender address. Default herald@localhost.
	From string `yaml:"from"`
	// MaxIdleTime is how long a pooled connection may stay quiet and still be used;
	// older ones are replaced before a send. Default 20s.
	MaxIdleTime time.Duration `yaml:"maxIdleTime"`
}

// SMSConfig configures SMS delivery; credentials are in each channel.
type SMSConfig struct {
	// BaseURL of the Twilio-compatible API. Default https://api.twilio.com.
	BaseURL string `yaml:"baseURL"`
	// MaxSegments is the longest message in SMS segments; longer text is cut
	// with an ellipsis. Default 3.
	MaxSegments int `yaml:"maxSegments"`
}

// FeedChatConfig configures the Chatter-compatible feed sender; user names
// and passwords are in each channel.
type FeedChatConfig struct {
	// LoginURL of the OAuth server. Default https://login.salesforce.com.
	LoginURL string `yaml:"loginURL"`
	// ClientID and ClientSecret of the connected app.
	ClientID     string `yaml:"clientId"`
	ClientSecret string `yaml:"clientSecret"`
	// APIVersion of the REST API. Default 59.0.
	APIVersion string `yaml:"apiVersion"`
}

// DeliveryConfig tunes retries and throughput.
type DeliveryConfig struct {
	// MaxAttempts is how many sends of one delivery are tried. Default 10.
	MaxAttempts int `yaml:"maxAttempts"`
	// BackoffBase and BackoffCap bound the retry delay: it doubles from the
	// base with every attempt up to the cap, with full jitter. Defaults 5s and 30m.
	BackoffBase time.Duration `yaml:"backoffBase"`
	BackoffCap  time.Duration `yaml:"backoffCap"`
	// SendTimeout bounds one send. Default 30s.
	SendTimeout time.Duration `yaml:"sendTimeout"`
	// AckWait is how long JetStream waits before it hands out again a delivery a
	// process took and stopped telling about (it died). Default 5s.
	AckWait time.Duration `yaml:"ackWait"`
	// ProbeInterval and ProbeIntervalMax pace the probes of a provider that cannot be
	// reached, doubling from the first to the second. Defaults 1s and 5s.
	ProbeInterval    time.Duration `yaml:"probeInterval"`
	ProbeIntervalMax time.Duration `yaml:"probeIntervalMax"`
	// MaxWait is how long a delivery waits for an unreachable provider before it
	// fails. Default 24h.
	MaxWait time.Duration `yaml:"maxWait"`
	// ReconcileAfter is how long a delivery may stay pending without a change before
	// the stream is asked whether it still holds its message (and it is published
	// again if not); ReconcileInterval is how often that is looked at. Defaults 1m, 30s.
	ReconcileAfter    time.Duration `yaml:"reconcileAfter"`
	ReconcileInterval time.Duration `yaml:"reconcileInterval"`
	// EmailConcurrency, SMSConcurrency and FeedChatConcurrency are how many
	// sends of each kind run at once. Defaults 8, 4, 4.
	EmailConcurrency    int `yaml:"emailConcurrency"`
	SMSConcurrency      int `yaml:"smsConcurrency"`
	FeedChatConcurrency int `yaml:"feedChatConcurrency"`
	// EmailRate, SMSRate and FeedChatRate limit sends per second. Default 0: no limit.
	EmailRate    float64 `yaml:"emailRate"`
	SMSRate      float64 `yaml:"smsRate"`
	FeedChatRate float64 `yaml:"feedChatRate"`
}

// startNATS starts the embedded server or connects to the configured cluster.
func startNATS(cfg Config) (*worker.NATS, error) {
	if cfg.NATS.URL != "" {
		return worker.Connect(worker.ExternalConfig{URL: cfg.NATS.URL, CredsFile: cfg.NATS.CredsFile,
			CAFile: cfg.NATS.CAFile, CertFile: cfg.NATS.CertFile, KeyFile: cfg.NATS.KeyFile})
	}
	return worker.StartEmbedded(filepath.Join(cfg.Data, "nats"), worker.EmbeddedConfig{Listen: cfg.NATS.Listen})
}

// senders builds one sender per channel kind from the configuration. Without
// an SMTP host, e-mail goes to .eml files in <data>/outbox.
func senders(cfg Config, log *slog.Logger) ([]channels.Sender, func(), error) {
	var mail channels.Sender
	closeMail := func() {}
	if cfg.SMTP.Host == "" {
		mail = email.NewOutbox(filepath.Join(cfg.Data, "outbox"), cfg.SMTP.From, log)
	} else {
		s, err := email.New(email.Config{Host: cfg.SMTP.Host, Port: cfg.SMTP.Port, TLSPolicy: cfg.SMTP.TLSPolicy,
			Username: cfg.SMTP.Username, Password: cfg.SMTP.Password, From: cfg.SMTP.From,
			Timeout: cfg.Delivery.SendTimeout, MaxIdleTime: cfg.SMTP.MaxIdleTime}, log)
		if err != nil {
			return nil, nil, fmt.Errorf("smtp: %w", err)
		}
		mail, closeMail = s, func() { _ = s.Close() }
	}
	return []channels.Sender{
		mail,
		sms.New(sms.Config{BaseURL: cfg.SMS.BaseURL, MaxSegments: cfg.SMS.MaxSegments, Timeout: cfg.Delivery.SendTimeout}),
		feedchat.New(feedchat.Config{LoginURL: cfg.FeedChat.LoginURL, ClientID: cfg.FeedChat.ClientID,
			ClientSecret: cfg.FeedChat.ClientSecret, APIVersion: cfg.FeedChat.APIVersion, Timeout: cfg.Delivery.SendTimeout}, nil),
	}, closeMail, nil
}

// workerConfig maps the configuration onto the worker's.
func workerConfig(d DeliveryConfig) worker.Config {
	return worker.Config{
		MaxAttempts: d.MaxAttempts, BackoffBase: d.BackoffBase, BackoffCap: d.BackoffCap, SendTimeout: d.SendTimeout,
		AckWait: d.AckWait, ProbeInterval: d.ProbeInterval, ProbeIntervalMax: d.ProbeIntervalMax, MaxWait: d.MaxWait,
		ReconcileAfter: d.ReconcileAfter, ReconcileInterval: d.ReconcileInterval,
		Kinds: map[channels.Kind]worker.KindConfig{
			channels.KindEmail:    {Concurrency: d.EmailConcurrency, Rate: d.EmailRate},
			channels.KindSMS:      {Concurrency: d.SMSConcurrency, Rate: d.SMSRate},
			channels.KindFeedChat: {Concurrency: d.FeedChatConcurrency, Rate: d.FeedChatRate},
		},
	}
}
