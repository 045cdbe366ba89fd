// Package notify holds the rules of Herald's notification side: channels,
// subscriptions and their runs. It validates what users give, in domain values
// (ids of channels, users and roles; ChannelInput, SubscriptionInput), which
// the API translates its bodies (package wire) into; every error names the
// field's path on the wire. It seals channel secrets, checks that a
// subscription's owner may have it fire, mints ids, owns the run state machine
// and rolls a subscription's health up from its runs' final states. The API, the
// engine and the demo all go through it; the store only keeps what it decides.
package notify
