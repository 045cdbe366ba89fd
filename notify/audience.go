package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// A subscription's audience beyond its owner's channels: members of the
// project, each of whom gets it as themselves (recipients), and the addresses
// of a report's rows, each restricted to its rows' elements (burst).

// BurstReports checks the report of a burst for the service; the analytics
// service implements it.
type BurstReports interface {
	// CheckBurst says, for a report of the project whose rows cannot give a
	// burst its addresses and elements, which of report, address or by is
	// wrong and why; "" when they can.
	CheckBurst(ctx context.Context, pid, report, address, by string) (field, problem string, err error)
}

// Bounds of a subscription's audience.
const (
	maxRecipientUsers = 10_000
	maxRecipientRoles = 10
	maxVia            = 4
)

// ViaEmail is the one kind a recipient is reached by without a channel of
// the owner's: the service's mail relay needs no credentials of theirs.
const ViaEmail = "email"

// parseAudience parses the recipients and the burst of in into sub, whose
// channels are parsed, naming in needs the burst's report.
func (s *Service) parseAudience(ctx context.Context, pid, owner string, in SubscriptionInput, sub *store.Subscription, needs *Needs) error {
	if in.Recipients != nil && in.Burst != nil {
		return invalid(subRoot+".burst", "a subscription has recipients or a burst, not both")
	}
	if in.Recipients == nil && in.Burst == nil {
		return nil
	}
	if sub.Def.FireMode == store.FireOnChange {
		return invalid(subRoot+".fireMode", "must be always for a subscription with recipients or a burst: "+
			"each recipient's condition is their own, and only the subscription's is remembered")
	}
	if err := perSubscriptionChecks(sub.Def); err != nil {
		return err
	}
	if in.Recipients != nil {
		r, err := s.parseRecipients(ctx, pid, owner, in.Recipients)
		sub.Def.Recipients = r
		return err
	}
	b, err := s.parseBurst(ctx, pid, owner, in.Burst, needs)
	sub.Def.Burst = b
	return err
}

// perSubscriptionChecks refuses, for a subscription with recipients or a
// burst, the checks that remember one thing per subscription or channel, not
// per recipient: what was last sent (sendWhen changed), the rows already sent
// (newRowsBy), and the values of the last fire (f:previous).
func perSubscriptionChecks(def store.SubscriptionDef) error {
	const why = "cannot be used with recipients or a burst: it remembers the last fire per channel, not per recipient"
	if def.SendWhen == store.SendChanged {
		return invalid(subRoot+".sendWhen", "changed "+why)
	}
	for i, a := range def.Attachments {
		if a.NewRowsBy != "" {
			return invalid(fmt.Sprintf("%s.attachments[%d].newRowsBy", subRoot, i), why)
		}
	}
	prevs, err := previousRefs(def)
	if err != nil {
		return err
	}
	if len(prevs) > 0 {
		return invalid(prevs[0].path, "reads f:previous, which "+why)
	}
	return nil
}

func (s *Service) parseRecipients(ctx context.Context, pid, owner string, in *RecipientsInput) (*store.Recipients, error) {
	const root = subRoot + ".recipients"
	out := &store.Recipients{}
	if len(in.Users)+len(in.Roles) == 0 {
		return nil, invalid(root, "must name users or roles")
	}
	if len(in.Users) > maxRecipientUsers {
		return nil, invalid(root+".users", fmt.Sprintf("may name at most %d users; name a role instead", maxRecipientUsers))
	}
	if len(in.Roles) > maxRecipientRoles {
		return nil, invalid(root+".roles", fmt.Sprintf("may name at most %d roles", maxRecipientRoles))
	}
	for i, u := range in.Users {
		path := fmt.Sprintf("%s.users[%d]", root, i)
		member, err := s.st.Membership(ctx, pid, u)
		if errors.Is(err, store.ErrNotFound) || (err == nil && member.Status != store.MemberEnabled) {
			return nil, invalid(path, "is not an enabled member of the project")
		}
		if err != nil {
			return nil, err
		}
		if slices.Contains(out.Users, u) {
			return nil, invalid(path, "names a user twice")
		}
		out.Users = append(out.Users, u)
	}
	for i, r := range in.Roles {
		path := fmt.Sprintf("%s.roles[%d]", root, i)
		role, ok := RoleByID(r)
		if !ok {
			return nil, invalid(path, "names no role of the project")
		}
		if slices.Contains(out.Roles, role.Identifier) {
			return nil, invalid(path, "names a role twice")
		}
		out.Roles = append(out.Roles, role.Identifier)
	}
	via := in.Via
	if len(via) == 0 {
		via = []ViaInput{{}} // e-mail
	}
	if len(via) > maxVia {
		return nil, invalid(root+".via", fmt.Sprintf("may name at most %d ways", maxVia))
	}
	for i, v := range via {
		path := fmt.Sprintf("%s.via[%d]", root, i)
		w, err := s.parseVia(ctx, path, owner, v)
		if err != nil {
			return nil, err
		}
		if w.Kind != ViaEmail && w.Kind != "sms" {
			return nil, invalid(path, "reaches a member at their login (e-mail) or their phone number (an SMS channel of yours); "+
				w.Kind+" has no address of a member's")
		}
		if slices.Contains(out.Via, w) {
			return nil, invalid(path, "names a way twice")
		}
		out.Via = append(out.Via, w)
	}
	return out, nil
}

func (s *Service) parseBurst(ctx context.Context, pid, owner string, in *BurstInput, needs *Needs) (*store.Burst, error) {
	const root = subRoot + ".burst"
	if _, ok := objectIn(pid, in.Report); !ok {
		return nil, invalid(root+".report", "must be a report URI of this project, /svc/md/"+pid+"/obj/<id>")
	}
	needs.Objects = append(needs.Objects, Report(in.Report, root+".report"))
	for _, f := range []struct{ name, uri string }{{"address", in.Address}, {"by", in.By}} {
		if _, ok := objectIn(pid, f.uri); !ok {
			return nil, invalid(root+"."+f.name, "must be an object URI of this project, /svc/md/"+pid+"/obj/<id>")
		}
	}
	via, err := s.parseVia(ctx, root+".via", owner, in.Via)
	if err != nil {
		return nil, err
	}
	if s.bursts == nil {
		return nil, invalid(root, "is not available: this service has no reports to burst from")
	}
	field, problem, err := s.bursts.CheckBurst(ctx, pid, in.Report, in.Address, in.By)
	if err != nil {
		return nil, err
	}
	if field != "" {
		return nil, invalid(root+"."+field, problem)
	}
	return &store.Burst{Report: in.Report, Address: in.Address, By: in.By, Via: via}, nil
}

// parseVia reads a way to reach recipients: e-mail, or one of owner's
// channels of a kind that sends to an address given apart from it.
func (s *Service) parseVia(ctx context.Context, path, owner string, v ViaInput) (store.Via, error) {
	if v.Channel == "" {
		return store.Via{Kind: ViaEmail}, nil
	}
	ch, err := s.st.ChannelByID(ctx, v.Channel)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ch.Owner != owner) {
		return store.Via{}, invalid(path, "names no channel configuration of the subscription's user")
	}
	if err != nil {
		return store.Via{}, err
	}
	if d, ok := s.kinds.Lookup(channels.Kind(ch.Kind)); !ok || d.Readdress == nil {
		return store.Via{}, invalid(path, "is a channel whose kind sends only to its own address")
	}
	return store.Via{Kind: ch.Kind, Channel: ch.ID}, nil
}

// Readdress returns the configuration a delivery through via sends to
// address with: the kind's, of via's channel ch when it has one, with
// address in place of its own, validated as the kind validates addresses (a
// *channels.FieldError otherwise).
func (s *Service) Readdress(via store.Via, ch *store.Channel, address string) (json.RawMessage, error) {
	d, ok := s.kinds.Lookup(channels.Kind(via.Kind))
	if !ok || d.Readdress == nil {
		return nil, fmt.Errorf("kind %s sends to no address of a recipient's", via.Kind)
	}
	var config json.RawMessage
	if ch != nil {
		config = ch.Config
	}
	return d.Readdress(s.settings[d.Kind], config, address)
}

// Verifier returns what holds deliveries of owner to addresses that come
// from data (a burst's rows) under delivery.verifyRecipients: a function
// that says whether a configuration of kind may be sent to, which it may
// when verification is off, when the kind has no mailbox (a webhook, a
// Slack conversation), when its address is in a trusted domain, or when its
// holder confirmed the owner's messages.
func (s *Service) Verifier(ctx context.Context, owner string) (func(kind string, config json.RawMessage) bool, error) {
	if !s.verifying {
		return func(string, json.RawMessage) bool { return true }, nil
	}
	rs, err := s.st.Recipients(ctx, owner)
	if err != nil {
		return nil, err
	}
	confirmed := make(map[string]bool, len(rs))
	for _, r := range rs {
		if !r.Verified.IsZero() {
			confirmed[r.Kind+"\x00"+r.Address] = true
		}
	}
	return func(kind string, config json.RawMessage) bool {
		address := s.mustConfirm(kind, config)
		return address == "" || confirmed[kind+"\x00"+address]
	}, nil
}

// Member is a member a subscription goes to: a user id, their login and
// phone number, and their standing in the project, which the decision of
// their fire reads.
type Member struct {
	ID, Login, Phone string
	Standing         Standing
}

// Audience returns the members sub goes to now, read at once with their
// standings: every named user and every member with a named role who is an
// enabled member of its project, each once; and the named users who are not
// (any more), whose fires skip them.
func (s *Service) Audience(ctx context.Context, sub store.Subscription) (members []Member, gone []string, err error) {
	r := sub.Def.Recipients
	if r == nil {
		return nil, nil, nil
	}
	list, err := s.st.Members(ctx, sub.ProjectID)
	if err != nil {
		return nil, nil, err
	}
	enabled := make(map[string]store.MemberUser, len(list))
	for _, m := range list {
		if m.Status == store.MemberEnabled {
			enabled[m.UserID] = m
		}
	}
	seen := map[string]bool{}
	add := func(m store.MemberUser) {
		if !seen[m.UserID] {
			seen[m.UserID] = true
			members = append(members, Member{ID: m.UserID, Login: m.User.Login, Phone: m.User.PhoneNumber,
				Standing: standingOf(m.Member, m.User.IsDomainAdmin && m.User.Domain == s.access.domain)})
		}
	}
	for _, id := range r.Users {
		if m, ok := enabled[id]; ok {
			add(m)
		} else {
			gone = append(gone, id)
		}
	}
	for _, m := range list {
		if m.Status != store.MemberEnabled {
			continue
		}
		for _, role := range r.Roles {
			if slices.Contains(m.Roles, role) {
				add(m)
				break
			}
		}
	}
	return members, gone, nil
}

// RecipientLinks returns the links a message of run to a recipient carries:
// a download link for each of files that is not an inline image, at its
// place at[i] among the run's files. No unsubscribe link, which would stop
// the subscription's channel for every recipient, and no link to the
// subscription's page, which is its owner's.
func (s *Service) RecipientLinks(runID string, files []store.Attachment, at []int) channels.Links {
	if s.publicURL == "" || len(s.linkKey) == 0 {
		return channels.Links{}
	}
	var l channels.Links
	expires := s.now().Add(s.cfg.FileLinkTTL).Truncate(time.Second)
	for i, f := range files {
		if f.ContentID == "" {
			l.Files = append(l.Files, s.fileLink(runID, at[i], f.Name, expires))
		}
	}
	return l
}

// Audience is what a run of a subscription with recipients or a burst did
// with them, as its run records it.
type Audience struct {
	// Recipients counts the members or addresses the run sent to.
	Recipients int `json:"recipients"`
	// Slices counts the distinct slices of the data they fell into: one
	// execution per metric and one render per report and format each.
	Slices int `json:"slices"`
	// NotTriggered counts the recipients whose slice did not meet the condition.
	NotTriggered int `json:"notTriggered,omitempty"`
	// Empty counts the recipients not sent to because their slice's reports
	// had no rows (onEmpty skip or notifyOwner).
	Empty int `json:"empty,omitempty"`
	// Rows counts the rows a burst read.
	Rows int `json:"rows,omitempty"`
	// Skips are the first of the recipients skipped, with why.
	Skips []Skip `json:"skips,omitempty"`
	// SliceDetails are the first of the slices: their conditions on the data,
	// what their condition saw and how many recipients they have.
	SliceDetails []SliceDetail `json:"sliceDetails,omitempty"`
}

// Skip is a recipient a run did not send to, and why.
type Skip struct {
	Row       int    `json:"row,omitempty"`       // a burst's row, from 1
	Recipient string `json:"recipient,omitempty"` // a member's user id
	Address   string `json:"address,omitempty"`
	Reason    string `json:"reason"`
}

// SliceDetail is one slice of a run's recipients.
type SliceDetail struct {
	Filters    []string            `json:"filters"` // MAQL conditions; none: all the data
	Recipients int                 `json:"recipients"`
	Condition  *bool               `json:"condition,omitempty"`
	Values     map[string]*float64 `json:"values,omitempty"`
	Subject    string              `json:"subject,omitempty"`
	Error      string              `json:"error,omitempty"`
}

// MaxBurstRecipients is how many distinct addresses one fire of a burst
// sends to (subscriptions.maxBurstRecipients).
func (s *Service) MaxBurstRecipients() int { return s.cfg.MaxBurstRecipients }
