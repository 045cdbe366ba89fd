package notify

// SubscriptionInput is a subscription as its owner gives it, in the domain's
// values: the API translates its body into it, and the demo builds it. A nil
// pointer is a value left out, which the rules tell from an empty one (a
// missing message is required, an empty one must not be empty). The rules'
// errors name the fields' paths on the wire (subscription.channels[1]), the
// index of a list being the index of its input.
//
// Metadata objects (reports, date attributes, a burst's label and
// attribute) are named by their object URI, /svc/md/<project>/obj/<id>: the
// reference the analytics layer, the expressions (f:executeMetric), the
// store and the engine all use. Channels, users and roles are named by id.
type SubscriptionInput struct {
	Title     string
	Triggers  []TriggerInput
	Condition *string
	Message   TemplateInput
	Subject   TemplateInput
	// Resolved is the all-clear of an onChange subscription.
	Resolved TemplateInput
	// Channels are ids of the owner's channels.
	Channels    []string
	Attachments []AttachmentInput
	Recipients  *RecipientsInput
	Burst       *BurstInput
	// OnEmpty is send (the default), skip or notifyOwner; SendWhen always
	// (the default) or changed; FireMode always (the default) or onChange.
	OnEmpty, SendWhen, FireMode *string
	// Enabled defaults to true.
	Enabled *bool
	// Paused, when not nil, are the ids of the channels the subscription
	// does not send to; nil keeps the pauses of the channels it keeps.
	Paused *[]string
}

// TriggerInput is a cron expression in a time zone (the service's default
// when nil).
type TriggerInput struct {
	Cron, Timezone *string
}

// TemplateInput is a template's text and, for a message, its HTML text.
type TemplateInput struct {
	Text, HTML *string
}

// AttachmentInput is a report the messages carry, in formats; NewRowsBy, a
// date attribute, keeps only the rows after those last sent.
type AttachmentInput struct {
	Report    string
	Formats   []string
	NewRowsBy *string
}

// RecipientsInput are members a subscription goes to, each as themselves:
// user ids, role ids, and how they are reached (e-mail when none).
type RecipientsInput struct {
	Users, Roles []string
	Via          []ViaInput
}

// BurstInput sends a subscription to the addresses of a report's rows: the
// label whose values are addresses, the attribute whose elements each
// address gets, and how they are reached.
type BurstInput struct {
	Report, Address, By string
	Via                 ViaInput
}

// ViaInput is how recipients are reached: by e-mail through the service's
// relay (Channel ""), or through the owner's channel with id Channel.
type ViaInput struct {
	Channel string
}
