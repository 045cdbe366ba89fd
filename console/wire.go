package console

import (
	"strings"
	"time"
)

// The API's shapes, as far as the console reads and writes them.

type expression struct {
	Expression string `json:"expression"`
}

type tmpl struct {
	Template *expression `json:"template,omitempty"`
	HTML     *expression `json:"html,omitempty"`
}

func (t *tmpl) text() string {
	if t == nil || t.Template == nil {
		return ""
	}
	return t.Template.Expression
}

type trigger struct {
	TimerEvent struct {
		CronExpression string `json:"cronExpression"`
		Timezone       string `json:"timezone,omitempty"`
	} `json:"timerEvent"`
}

type attachment struct {
	Report    string   `json:"report"`
	Formats   []string `json:"formats"`
	NewRowsBy string   `json:"newRowsBy,omitempty"` // kept as it was: the form does not edit it
}

type pausedChannel struct {
	Channel string `json:"channel"`
	By      string `json:"by,omitempty"`
	At      string `json:"at,omitempty"`
}

type subscription struct {
	Triggers  []trigger `json:"triggers"`
	Condition struct {
		Condition expression `json:"condition"`
	} `json:"condition"`
	Message         *tmpl           `json:"message,omitempty"`
	Subject         *tmpl           `json:"subject,omitempty"`
	ResolvedMessage *tmpl           `json:"resolvedMessage,omitempty"`
	Channels        []string        `json:"channels"`
	Attachments     []attachment    `json:"attachments"`
	PausedChannels  []pausedChannel `json:"pausedChannels,omitempty"`
	Enabled         bool            `json:"enabled"`
	FireMode        string          `json:"fireMode"`
	// OnEmpty and SendWhen are kept as they were: the form does not edit them.
	OnEmpty  string `json:"onEmpty,omitempty"`
	SendWhen string `json:"sendWhen,omitempty"`
	Meta     struct {
		Title   string `json:"title"`
		URI     string `json:"uri,omitempty"`
		Created string `json:"created,omitempty"`
		Updated string `json:"updated,omitempty"`
	} `json:"meta"`
	Health *struct {
		Healthy        bool `json:"healthy"`
		FailuresInARow int  `json:"failuresInARow"`
	} `json:"health,omitempty"`
}

// id is the subscription's id, the last element of its URI.
func (s subscription) ID() string { return last(s.Meta.URI) }

type subscriptionDoc struct {
	Subscription subscription `json:"subscription"`
}

type run struct {
	URI         string              `json:"uri"`
	ScheduledAt string              `json:"scheduledAt"`
	State       string              `json:"state"`
	Trigger     string              `json:"trigger"`
	By          string              `json:"by"`
	Resolved    bool                `json:"resolved"`
	Condition   *bool               `json:"condition"`
	Values      map[string]*float64 `json:"values"`
	Subject     string              `json:"subject"`
	Text        string              `json:"text"`
	Attachments []struct {
		Name        string `json:"name"`
		ContentType string `json:"contentType"`
		Inline      bool   `json:"inline"`
	} `json:"attachments"`
	Error          string   `json:"error"`
	Stage          string   `json:"stage"`
	Reason         string   `json:"reason"`
	Started        string   `json:"started"`
	Finished       string   `json:"finished"`
	PausedChannels []string `json:"pausedChannels"`
	Events         []struct {
		Event, Channel, By, At string
	} `json:"events"`
	Deliveries []struct {
		Channel    string `json:"channel"`
		Kind       string `json:"kind"`
		State      string `json:"state"`
		Attempts   int    `json:"attempts"`
		LastError  string `json:"lastError"`
		ProviderID string `json:"providerId"`
		SentAt     string `json:"sentAt"`
	} `json:"deliveries"`
}

func (r run) ID() string { return last(r.URI) }

type channel struct {
	Configuration map[string]map[string]any `json:"configuration"`
	Meta          struct {
		Title string `json:"title"`
		URI   string `json:"uri"`
	} `json:"meta"`
	Verification string `json:"verification,omitempty"` // "verified", "unverified", or none
}

func (c channel) ID() string { return last(c.Meta.URI) }

type entry struct {
	Link       string `json:"link"`
	Title      string `json:"title"`
	Identifier string `json:"identifier"`
	Summary    string `json:"summary"`
}

func last(uri string) string { return uri[strings.LastIndexByte(uri, '/')+1:] }

// apiTime reads the records' "YYYY-MM-DD HH:MM:SS" (UTC) times.
func apiTime(s string) time.Time {
	t, _ := time.ParseInLocation(time.DateTime, s, time.UTC)
	return t
}
