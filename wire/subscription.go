package wire

import "encoding/json"

// Subscription is a subscription as the API carries it, in a request and in
// an answer. A pointer is a field a request may leave out, which the rules
// tell from an empty value (a missing template is required, an empty one must
// not be empty). A list left out stays out; an answer's empty list is
// written, as []. The fields are in the order of their keys: the order in
// which the API has always written them.
type Subscription struct {
	// Attachments are the reports the messages carry as files.
	Attachments []Attachment `json:"attachments,omitzero"`
	// Burst (extension) sends the subscription to the addresses of a
	// report's rows, each restricted to its rows' elements.
	Burst *Burst `json:"burst,omitempty"`
	// Channels are the URIs of the owner's channel configurations.
	Channels  []string   `json:"channels,omitzero"`
	Condition *Condition `json:"condition,omitempty"`
	Enabled   *bool      `json:"enabled,omitempty"`
	// FireMode is always (the default) or onChange.
	FireMode *string `json:"fireMode,omitempty"`
	// Health is reported by the service; a PUT may echo it back, and it is
	// ignored.
	Health  *Health   `json:"health,omitempty"`
	Message *Template `json:"message,omitempty"`
	Meta    *Meta     `json:"meta,omitempty"`
	// OnEmpty is what a run whose reports have no rows does: send (the
	// default), skip or notifyOwner.
	OnEmpty *string `json:"onEmpty,omitempty"`
	// PausedChannels, when given, are the channels the subscription does not
	// send to (an unsubscribe link pauses one); when left out, a PUT keeps the
	// pauses of the channels it keeps.
	PausedChannels *[]PausedChannel `json:"pausedChannels,omitempty"`
	// Recipients (extension) send the subscription to members, each as
	// themselves.
	Recipients *Recipients `json:"recipients,omitempty"`
	// ResolvedMessage is the all-clear of an onChange subscription.
	ResolvedMessage *Template `json:"resolvedMessage,omitempty"`
	// SendWhen is always (the default) or changed: only when the message or
	// a file differs from what the channel was last sent.
	SendWhen *string   `json:"sendWhen,omitempty"`
	Subject  *Template `json:"subject,omitempty"`
	Triggers []Trigger `json:"triggers,omitzero"`
}

// Trigger is one trigger of a subscription: a timer.
type Trigger struct {
	TimerEvent *TimerEvent `json:"timerEvent"`
}

// TimerEvent fires on a six-field cron expression in a time zone (the
// service's default when left out).
type TimerEvent struct {
	CronExpression *string `json:"cronExpression"`
	Timezone       *string `json:"timezone,omitempty"`
}

// Condition is a subscription's condition: {"condition":{"expression":...}}.
type Condition struct {
	Condition *Expression `json:"condition,omitempty"`
}

// Expression is an expression of the expression language: a condition or a
// template.
type Expression struct {
	Expression *string `json:"expression"`
}

// Template is a message, a subject or an all-clear. A message may also have
// an HTML template (an extension): its text is HTML, and what its
// expressions write is escaped.
type Template struct {
	HTML     *Expression `json:"html,omitempty"`
	Template *Expression `json:"template,omitempty"`
}

// Text is the template's text, "" when it has none.
func (t *Template) Text() string {
	if t == nil || t.Template == nil || t.Template.Expression == nil {
		return ""
	}
	return *t.Template.Expression
}

// HTMLText is the HTML template's text, "" when it has none.
func (t *Template) HTMLText() string {
	if t == nil || t.HTML == nil || t.HTML.Expression == nil {
		return ""
	}
	return *t.HTML.Expression
}

// TextTemplate is a template of the text src.
func TextTemplate(src string) *Template {
	return &Template{Template: &Expression{Expression: &src}}
}

// Attachment is a report the messages carry, in formats (PDF, CSV, PNG,
// XLS). NewRowsBy, when given, is the URI of a date attribute: only the rows
// after those the channel was last sent go.
type Attachment struct {
	Formats   []string `json:"formats,omitzero"`
	NewRowsBy *string  `json:"newRowsBy,omitempty"`
	Report    string   `json:"report"`
}

// Burst is a subscription's burst: a report, the URI of the label of its
// rows whose values are addresses, the URI of the attribute whose elements
// each address gets, and how they are reached ("email", or the URI of one of
// the owner's channels).
type Burst struct {
	Address string `json:"address"`
	By      string `json:"by"`
	Report  string `json:"report"`
	Via     string `json:"via"`
}

// Recipients are a subscription's recipients: role URIs, profile URIs of
// members, and how they are reached ("email", or the URI of one of the
// owner's channels).
type Recipients struct {
	Roles []string `json:"roles,omitzero"`
	Users []string `json:"users,omitzero"`
	Via   []string `json:"via,omitzero"`
}

// PausedChannel is one paused channel. By and At are the service's record; a
// PUT may echo them back, and they are kept as they were.
type PausedChannel struct {
	Channel string `json:"channel"`
	By      string `json:"by,omitempty"`
	At      string `json:"at,omitempty"`
}

// Health is what the service knows of a subscription's health.
type Health struct {
	FailuresInARow int  `json:"failuresInARow"`
	Healthy        bool `json:"healthy"`
}

// UnmarshalJSON reads a health as it is shown, and takes anything else that
// a client echoes back as no health: the field is the service's, and a
// request's is ignored.
func (h *Health) UnmarshalJSON(b []byte) error {
	type plain Health
	var v plain
	if json.Unmarshal(b, &v) == nil {
		*h = Health(v)
	}
	return nil
}

// Meta is the meta of a record: the title, which a request gives, and the
// fields the service sets, which a client echoes back on PUT and which are
// ignored.
type Meta struct {
	Author   string `json:"author"`
	Category string `json:"category"`
	Created  string `json:"created"`
	Title    string `json:"title"`
	Updated  string `json:"updated"`
	URI      string `json:"uri"`
}

// SubscriptionDoc is the body of a subscription's request and answer:
// {"subscription":{...}}.
type SubscriptionDoc struct {
	Subscription *Subscription `json:"subscription"`
}

// Items is a listing: {"items":[...]}.
type Items[T any] struct {
	Items []T `json:"items"`
}

// SubscriptionList is the listing of a user's subscriptions in a project.
type SubscriptionList struct {
	Subscriptions Items[SubscriptionDoc] `json:"subscriptions"`
}
