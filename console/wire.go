package console

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/heraldhq/herald/wire"
)

// Helpers over the API's shapes, which are the wire package's.

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
