package console

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/heraldhq/herald/wire"
)

// The API's shapes of runs, as far as the console reads them; those of
// subscriptions and channels are the wire package's.

// subID is a subscription's id, the last element of its URI.
func subID(s *wire.Subscription) string {
	if s == nil || s.Meta == nil {
		return ""
	}
	return last(s.Meta.URI)
}

// titleOf is a record's title.
func titleOf(m *wire.Meta) string {
	if m == nil {
		return ""
	}
	return m.Title
}

// str is the string p points to, "" for none.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// isOn reads an enabled flag, which is on unless it says false.
func isOn(p *bool) bool { return p == nil || *p }

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
		Recipient  string `json:"recipient"`
		Address    string `json:"address"`
		State      string `json:"state"`
		Attempts   int    `json:"attempts"`
		LastError  string `json:"lastError"`
		ProviderID string `json:"providerId"`
		SentAt     string `json:"sentAt"`
	} `json:"deliveries"`
	DeliveryCounts  map[string]int `json:"deliveryCounts"`
	DeliveriesTotal int            `json:"deliveriesTotal"`
	Skipped         int            `json:"skipped"`
	Audience        *struct {
		Recipients   int    `json:"recipients"`
		Slices       int    `json:"slices"`
		NotTriggered int    `json:"notTriggered"`
		Empty        int    `json:"empty"`
		Rows         int    `json:"rows"`
		Skips        []skip `json:"skips"`
		SliceDetails []struct {
			Filters    []string `json:"filters"`
			Recipients int      `json:"recipients"`
			Condition  *bool    `json:"condition"`
			Subject    string   `json:"subject"`
			Error      string   `json:"error"`
		} `json:"sliceDetails"`
	} `json:"audience"`
}

// skip is a recipient a run or the recipients listing skipped, and why.
type skip struct {
	Row     int    `json:"row"`
	User    string `json:"user"`
	Address string `json:"address"`
	Reason  string `json:"reason"`
}

func (r run) ID() string { return last(r.URI) }

// chanID is a channel's id, the last element of its URI.
func chanID(ch wire.Channel) string {
	if ch.Meta == nil {
		return ""
	}
	return last(ch.Meta.URI)
}

// configOf is the channel's configuration of the kind with the wire key, nil
// when it holds none.
func configOf(ch wire.Channel, key string) map[string]any {
	raw, ok := ch.Configuration[key]
	if !ok {
		return nil
	}
	conf := map[string]any{}
	_ = json.Unmarshal(raw, &conf)
	return conf
}

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
