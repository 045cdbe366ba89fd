package app

import (
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/feedchat"
	"github.com/heraldhq/herald/channels/googlechat"
	"github.com/heraldhq/herald/channels/slack"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/channels/teams"
	"github.com/heraldhq/herald/channels/webhook"
)

// Kinds are the channel kinds this build delivers to. A kind is one package
// under channels/ and one line here: every other layer reads it from this
// registry.
var Kinds = channels.MustRegistry(
	email.Descriptor,
	sms.Descriptor,
	feedchat.Descriptor,
	webhook.Descriptor,
	slack.Descriptor,
	teams.Descriptor,
	googlechat.Descriptor,
)
