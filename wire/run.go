package wire

import "strings"

// Run is one run of a subscription as its run history (an extension) shows
// it. Attachment files stay inside the service: only their names and types
// are shown.
type Run struct {
	URI         string              `json:"uri"`
	ScheduledAt string              `json:"scheduledAt"`
	State       string              `json:"state"`
	Trigger     string              `json:"trigger"`            // schedule or manual
	By          string              `json:"by,omitempty"`       // who sent it now
	Resolved    bool                `json:"resolved,omitempty"` // the all-clear of an onChange subscription
	Condition   *bool               `json:"condition,omitempty"`
	Values      map[string]*float64 `json:"values,omitempty"`
	Subject     string              `json:"subject,omitempty"`
	Text        string              `json:"text,omitempty"`
	Attachments []RunAttachment     `json:"attachments,omitempty"`
	Error       string              `json:"error,omitempty"`
	Stage       string              `json:"stage,omitempty"`
	Reason      string              `json:"reason,omitempty"`
	TimingsMS   map[string]int64    `json:"timingsMs,omitempty"`
	Started     string              `json:"started"`
	Finished    string              `json:"finished,omitempty"`
	Deliveries  []Delivery          `json:"deliveries"`
	// DeliveryCounts counts the run's deliveries by state; DeliveriesTotal is
	// how many the listing selects, of which Deliveries is a page.
	DeliveryCounts  map[string]int `json:"deliveryCounts"`
	DeliveriesTotal int            `json:"deliveriesTotal"`
	// Skipped counts the recipients the run did not send to; Audience says
	// what it did with its recipients.
	Skipped  int       `json:"skipped,omitempty"`
	Audience *Audience `json:"audience,omitempty"`
	// PausedChannels are the channels the run did not send to because they are paused.
	PausedChannels []string `json:"pausedChannels,omitempty"`
	// Events happened after the run was handed over, such as an unsubscribe from its message.
	Events []RunEvent `json:"events,omitempty"`
}

// ID is the run's id, the last element of its URI.
func (r Run) ID() string { return r.URI[strings.LastIndexByte(r.URI, '/')+1:] }

// RunAttachment is a file a run sent.
type RunAttachment struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Inline      bool   `json:"inline,omitempty"` // an image the mail's HTML body shows (a chart), not a file of its own
}

// Delivery is one delivery of a run.
type Delivery struct {
	Channel string `json:"channel,omitempty"` // none for a recipient's e-mail
	Kind    string `json:"kind"`
	// Recipient is the member a delivery is for, and Address where it went in
	// place of its channel's own: a recipient's.
	Recipient  string `json:"recipient,omitempty"`
	Address    string `json:"address,omitempty"`
	State      string `json:"state"`
	Attempts   int    `json:"attempts"`
	LastError  string `json:"lastError,omitempty"`
	ProviderID string `json:"providerId,omitempty"`
	SentAt     string `json:"sentAt,omitempty"`
}

// RunEvent is something that happened to a run after it was handed over.
type RunEvent struct {
	Event   string `json:"event"`             // "unsubscribed", or "paused" (the subscription paused itself)
	Channel string `json:"channel,omitempty"` // the URI of the one unsubscribed from
	By      string `json:"by"`
	Reason  string `json:"reason,omitempty"`
	At      string `json:"at"` // RFC 3339
}

// Audience is what a run of a subscription with recipients or a burst did
// with them.
type Audience struct {
	Recipients   int           `json:"recipients"`
	Slices       int           `json:"slices"`
	NotTriggered int           `json:"notTriggered,omitempty"`
	Empty        int           `json:"empty,omitempty"`
	Rows         int           `json:"rows,omitempty"`
	Skips        []Skip        `json:"skips,omitempty"`
	SliceDetails []SliceDetail `json:"sliceDetails,omitempty"`
}

// Skip is a recipient a run, or the listing of recipients, did not send to,
// and why. Its fields are in the order of their keys.
type Skip struct {
	Address string `json:"address,omitempty"`
	Reason  string `json:"reason"`
	Row     int    `json:"row,omitempty"`  // a burst's row, from 1
	User    string `json:"user,omitempty"` // a member's profile URI
}

// SliceDetail is one slice of a run's recipients: its conditions on the
// data (MAQL; none: all the data), what its condition saw, and how many
// recipients it has.
type SliceDetail struct {
	Filters    []string            `json:"filters"`
	Recipients int                 `json:"recipients"`
	Condition  *bool               `json:"condition,omitempty"`
	Values     map[string]*float64 `json:"values,omitempty"`
	Subject    string              `json:"subject,omitempty"`
	Error      string              `json:"error,omitempty"`
}

// RunDoc is the body of one run: {"run":{...}}.
type RunDoc struct {
	Run Run `json:"run"`
}

// RunList is a page of a subscription's run history.
type RunList struct {
	Runs Items[RunDoc] `json:"runs"`
}
