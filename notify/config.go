package notify

import (
	"errors"
	"fmt"
	"time"
)

// Config is what the notification side allows and how its health rolls up.
type Config struct {
	// MinInterval is the shortest time a subscription's triggers may leave between
	// two fires. Default 60s.
	MinInterval time.Duration `yaml:"minInterval"`
	// DefaultTimezone is the IANA time zone of triggers that name none. Default UTC.
	DefaultTimezone string `yaml:"defaultTimezone"`
	// MaxPerUser is how many subscriptions one user may hold in one project; 0: no bound. Default 1000.
	MaxPerUser int `yaml:"maxPerUser"`
	// MaxPerProject is how many subscriptions one project may hold; 0: no bound. Default 10000.
	MaxPerProject int `yaml:"maxPerProject"`
	// MaxChannelsPerUser is how many channel configurations one user may hold; 0: no bound. Default 100.
	MaxChannelsPerUser int `yaml:"maxChannelsPerUser"`
	// FailuresBeforeNotice runs in a row that failed (to evaluate, or every delivery
	// of them) mark a subscription unhealthy and send its owner a notice. Default 3.
	FailuresBeforeNotice int `yaml:"failuresBeforeNotice"`
	// PauseAfterFailures runs in a row that failed pause a subscription,
	// with an event on the run and a notice to its owner, until the owner
	// resumes it; 0: never. Default 10.
	PauseAfterFailures int `yaml:"pauseAfterFailures"`
	// SendNowEvery is how often one subscription may be sent now. Default 10s.
	SendNowEvery time.Duration `yaml:"sendNowEvery"`
	// TestEvery is how often one owner may have a channel configuration of
	// theirs sent a test message (TestChannel); 0: no bound. Default 10s.
	TestEvery time.Duration `yaml:"testEvery"`
	// SendNowPerHour is how many sends on demand one owner may make in any
	// hour: send now, channel tests and confirmations of recipients
	// together; 0: no bound. Default 60.
	SendNowPerHour int `yaml:"sendNowPerHour"`
	// ProjectSendNowPerHour is how many times the subscriptions of one
	// project, all owners together, may be sent now in any hour; 0: no
	// bound. Default 600.
	ProjectSendNowPerHour int `yaml:"projectSendNowPerHour"`
	// HealthInterval is how often finished runs are rolled up into their
	// subscriptions' health when nothing wakes the roll-up sooner. Default 2s.
	HealthInterval time.Duration `yaml:"healthInterval"`
	// FileLinkTTL is how long the download link of an attachment, which messages
	// that cannot carry files (SMS, feed chat) get, keeps working. Default 168h (7 days).
	FileLinkTTL time.Duration `yaml:"fileLinkTTL"`
	// LinkTTL is how long the unsubscribe link of a message keeps working
	// (unless the channel is turned back on after it, which voids it at once).
	// Default 2400h (100 days): longer than the longest quarter, so that the
	// link of the latest message of anything sent at least quarterly works
	// until the next one comes, with its own link.
	LinkTTL time.Duration `yaml:"linkTTL"`
	// MaxBurstRecipients is how many distinct addresses one fire of a
	// subscription bursting from a report's rows sends to; the rows of
	// further addresses are skipped and counted. Default 100000.
	MaxBurstRecipients int `yaml:"maxBurstRecipients"`
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{MinInterval: time.Minute, DefaultTimezone: "UTC", MaxPerUser: 1000, MaxPerProject: 10000,
		MaxChannelsPerUser: 100, FailuresBeforeNotice: 3, PauseAfterFailures: 10, SendNowEvery: 10 * time.Second, TestEvery: 10 * time.Second,
		SendNowPerHour: 60, ProjectSendNowPerHour: 600, HealthInterval: 2 * time.Second, FileLinkTTL: 7 * 24 * time.Hour,
		LinkTTL: 100 * 24 * time.Hour, MaxBurstRecipients: 100_000}
}

// Validate names the wrong field.
func (c Config) Validate() error {
	var errs []error
	if c.MinInterval < time.Second {
		errs = append(errs, fmt.Errorf("minInterval: must be at least 1s, got %s", c.MinInterval))
	}
	if _, err := time.LoadLocation(c.DefaultTimezone); err != nil || c.DefaultTimezone == "" || c.DefaultTimezone == "Local" {
		errs = append(errs, fmt.Errorf("defaultTimezone: %q is not an IANA time zone", c.DefaultTimezone))
	}
	for name, v := range map[string]int{"maxPerUser": c.MaxPerUser, "maxPerProject": c.MaxPerProject,
		"maxChannelsPerUser": c.MaxChannelsPerUser, "sendNowPerHour": c.SendNowPerHour,
		"projectSendNowPerHour": c.ProjectSendNowPerHour, "pauseAfterFailures": c.PauseAfterFailures} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s: must be 0 (no bound) or more, got %d", name, v))
		}
	}
	if c.FailuresBeforeNotice < 1 {
		errs = append(errs, errors.New("failuresBeforeNotice: must be at least 1"))
	}
	if c.SendNowEvery < 0 || c.HealthInterval < 10*time.Millisecond {
		errs = append(errs, errors.New("sendNowEvery must not be negative and healthInterval at least 10ms"))
	}
	if c.TestEvery < 0 {
		errs = append(errs, fmt.Errorf("testEvery: must be 0 (no bound) or more, got %s", c.TestEvery))
	}
	if c.FileLinkTTL < time.Minute {
		errs = append(errs, fmt.Errorf("fileLinkTTL: must be at least 1m, got %s", c.FileLinkTTL))
	}
	if c.MaxBurstRecipients < 1 || c.MaxBurstRecipients > 10_000_000 {
		errs = append(errs, fmt.Errorf("maxBurstRecipients: must be from 1 to 10000000, got %d", c.MaxBurstRecipients))
	}
	if c.LinkTTL < time.Hour {
		errs = append(errs, fmt.Errorf("linkTTL: must be at least 1h, got %s", c.LinkTTL))
	}
	return errors.Join(errs...)
}
