package api

import (
	"fmt"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/wire"
)

const subRoot = "subscription"

// subscriptionInput translates a subscription's body into the domain's
// input: the URIs of channels, users and roles into their ids, each refusal
// naming its field. The rules of notify check the rest, naming their fields
// on the same paths.
func (s *Server) subscriptionInput(pid, owner string, in *wire.Subscription) (notify.SubscriptionInput, error) {
	var out notify.SubscriptionInput
	if in == nil {
		return out, badField(subRoot, "is required")
	}
	if in.Meta != nil {
		out.Title = in.Meta.Title
	}
	for _, t := range in.Triggers {
		var ti notify.TriggerInput
		if t.TimerEvent != nil {
			ti = notify.TriggerInput{Cron: t.TimerEvent.CronExpression, Timezone: t.TimerEvent.Timezone}
		}
		out.Triggers = append(out.Triggers, ti)
	}
	if in.Condition != nil && in.Condition.Condition != nil {
		out.Condition = in.Condition.Condition.Expression
	}
	out.Message, out.Subject, out.Resolved = templateInput(in.Message), templateInput(in.Subject), templateInput(in.ResolvedMessage)
	out.OnEmpty, out.SendWhen, out.FireMode, out.Enabled = in.OnEmpty, in.SendWhen, in.FireMode, in.Enabled
	for _, a := range in.Attachments {
		out.Attachments = append(out.Attachments, notify.AttachmentInput{Report: a.Report, Formats: a.Formats, NewRowsBy: a.NewRowsBy})
	}
	var err error
	if out.Channels, err = channelIDs(owner, in.Channels); err != nil {
		return out, err
	}
	if out.Paused, err = pausedIDs(owner, in.PausedChannels); err != nil {
		return out, err
	}
	if in.Recipients != nil && in.Burst != nil {
		return out, badField(subRoot+".burst", "a subscription has recipients or a burst, not both")
	}
	if out.Recipients, err = s.recipientsInput(pid, owner, in.Recipients); err != nil {
		return out, err
	}
	out.Burst, err = s.burstInput(owner, in.Burst)
	return out, err
}

// templateInput is a template's text and HTML text; an HTML template
// without its expression is an empty one.
func templateInput(t *wire.Template) notify.TemplateInput {
	var out notify.TemplateInput
	if t == nil {
		return out
	}
	if t.Template != nil {
		out.Text = t.Template.Expression
	}
	if t.HTML != nil {
		out.HTML = t.HTML.Expression
		if out.HTML == nil {
			out.HTML = new("")
		}
	}
	return out
}

// channelIDs are the ids of the owner's channels that uris name.
func channelIDs(owner string, uris []string) ([]string, error) {
	var ids []string
	for i, u := range uris {
		p := fmt.Sprintf("%s.channels[%d]", subRoot, i)
		uid, cid, ok := wire.ParseChannelURI(u)
		if !ok {
			return nil, badField(p, "must be a channel configuration URI /svc/account/profile/<user id>/channelConfigurations/<id>")
		}
		if uid != owner {
			return nil, badField(p, "names no channel configuration of the subscription's user")
		}
		ids = append(ids, cid)
	}
	return ids, nil
}

// pausedIDs are the ids of the paused channels, nil when the body leaves
// them out.
func pausedIDs(owner string, paused *[]wire.PausedChannel) (*[]string, error) {
	if paused == nil {
		return nil, nil
	}
	ids := make([]string, 0, len(*paused))
	for i, pc := range *paused {
		uid, cid, ok := wire.ParseChannelURI(pc.Channel)
		if !ok || uid != owner {
			return nil, badField(fmt.Sprintf("%s.pausedChannels[%d].channel", subRoot, i), "must be one of the subscription's channels")
		}
		ids = append(ids, cid)
	}
	return &ids, nil
}

// recipientsInput translates the members' profile URIs, the roles' URIs
// and the ways they are reached.
func (s *Server) recipientsInput(pid, owner string, in *wire.Recipients) (*notify.RecipientsInput, error) {
	if in == nil {
		return nil, nil
	}
	const root = subRoot + ".recipients"
	out := &notify.RecipientsInput{}
	for i, u := range in.Users {
		uid, ok := wire.ParseProfileURI(u)
		if !ok {
			return nil, badField(fmt.Sprintf("%s.users[%d]", root, i), "must be a profile URI /svc/account/profile/<user id>")
		}
		out.Users = append(out.Users, uid)
	}
	for i, r := range in.Roles {
		rpid, rid, ok := wire.ParseRoleURI(r)
		if _, known := notify.RoleByID(rid); !ok || rpid != pid || !known {
			return nil, badField(fmt.Sprintf("%s.roles[%d]", root, i), "must be a role URI of this project, /svc/projects/"+pid+"/roles/<id>")
		}
		out.Roles = append(out.Roles, rid)
	}
	for i, v := range in.Via {
		via, err := s.viaInput(fmt.Sprintf("%s.via[%d]", root, i), owner, v)
		if err != nil {
			return nil, err
		}
		out.Via = append(out.Via, via)
	}
	return out, nil
}

// burstInput translates the way a burst's addresses are reached; its
// report, label and attribute are object URIs, which the rules check.
func (s *Server) burstInput(owner string, in *wire.Burst) (*notify.BurstInput, error) {
	if in == nil {
		return nil, nil
	}
	out := &notify.BurstInput{Report: in.Report, Address: in.Address, By: in.By}
	if in.Via == "" {
		return out, nil
	}
	var err error
	out.Via, err = s.viaInput(subRoot+".burst.via", owner, in.Via)
	return out, err
}

// viaInput reads a way to reach recipients: "email", or the URI of one of
// the owner's channels.
func (s *Server) viaInput(path, owner, v string) (notify.ViaInput, error) {
	if v == notify.ViaEmail {
		return notify.ViaInput{}, nil
	}
	uid, cid, ok := wire.ParseChannelURI(v)
	if !ok {
		if d, ok := s.notify.Kinds().Lookup(channels.Kind(v)); ok && d.Readdress != nil {
			return notify.ViaInput{}, badField(path, fmt.Sprintf("%s sends with credentials of a channel: name one of your %s channels by its URI",
				v, d.Title))
		}
		return notify.ViaInput{}, badField(path, "must be email or the URI of one of your channels, /svc/account/profile/<user id>/channelConfigurations/<id>")
	}
	if uid != owner {
		return notify.ViaInput{}, badField(path, "names no channel configuration of the subscription's user")
	}
	return notify.ViaInput{Channel: cid}, nil
}
