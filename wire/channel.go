package wire

import "encoding/json"

// Channel is a channel configuration as the API carries it:
// {"configuration":{"<kind>Configuration":{...}},"meta":{"title":"..."}}.
// The configuration holds exactly one kind, by its wire key
// (emailConfiguration, smsConfiguration, ...), whose fields are the kind's
// own; an answer never shows the kind's secret.
type Channel struct {
	Configuration map[string]json.RawMessage `json:"configuration"`
	Meta          *Meta                      `json:"meta,omitempty"`
	// Verification (extension) is set by the service when it verifies
	// recipients: "verified" or "unverified". A client echoes it back on PUT,
	// and it is ignored.
	Verification string `json:"verification,omitempty"`
}

// Kind returns the wire key and the configuration of a channel that holds
// exactly one kind.
func (c *Channel) Kind() (key string, config json.RawMessage, ok bool) {
	if c == nil || len(c.Configuration) != 1 {
		return "", nil, false
	}
	for key, config = range c.Configuration {
	}
	return key, config, true
}

// ChannelDoc is the body of a channel configuration's request and answer:
// {"channelConfiguration":{...}}.
type ChannelDoc struct {
	ChannelConfiguration *Channel `json:"channelConfiguration"`
}

// ChannelList is the listing of a user's channel configurations.
type ChannelList struct {
	ChannelConfigurations Items[ChannelDoc] `json:"channelConfigurations"`
}
