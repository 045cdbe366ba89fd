package notify

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/secret"
	"github.com/heraldhq/herald/store"
)

// Scheduler is told of every change of a subscription, so that it applies
// the change at once, and runs a subscription now when a person asks.
type Scheduler interface {
	SubscriptionChanged(id string)
	SendNow(ctx context.Context, sub store.Subscription, by string) (store.Run, error)
}

// Deliveries ends what a subscription still has pending once it, or one of
// its channels, stops sending: the deliveries fail with reason at once, and
// the senders drop those they hold, rather than send them or wait out a
// destination that takes nothing. ch "" means every channel.
type Deliveries interface {
	CallOff(ctx context.Context, subscription, ch, reason string) error
}

// Options are the parts of a Service that are not configuration.
type Options struct {
	// Domain is the service's domain, whose admins may do everything in its
	// projects (the access rules of Access).
	Domain string
	// Kinds are the channel kinds and Settings their configuration sections.
	Kinds    *channels.Registry
	Settings map[channels.Kind]channels.Settings
	// Box seals channel secrets at rest.
	Box *secret.Box
	// PublicURL is where people reach the service (the configuration's
	// publicURL), without a trailing slash; "" puts no links in messages.
	PublicURL string
	// LinkKey signs the links of messages. Required with PublicURL.
	LinkKey []byte
	// Clock is the time; nil means the real clock.
	Clock clock.Clock
	// Logger receives the log. Default: discarded.
	Logger *slog.Logger
	// Tester sends the test messages of TestChannel, and the confirmations
	// of recipients; nil refuses them with ErrNoTester.
	Tester Tester
	// VerifyRecipients holds the channels to an e-mail address or phone
	// number outside TrustedDomains until their recipients accept them
	// (delivery.verifyRecipients). Needs PublicURL.
	VerifyRecipients bool
	// TrustedDomains are mail domains whose addresses, and those of their
	// subdomains, need no confirmation (delivery.trustedDomains).
	TrustedDomains []string
	// Bursts checks the reports subscriptions burst from; nil refuses bursts.
	Bursts BurstReports
	// Dates tells the date attributes an attachment's newRowsBy may name;
	// nil refuses every newRowsBy.
	Dates Dates
	// Scheduler is told of every change of a subscription and runs one now
	// when a person asks; nil: no engine, and SendNow refuses.
	Scheduler Scheduler
	// HandedOver is told when notices were handed over for delivery; nil:
	// nobody is.
	HandedOver func()
	// Deliveries calls off what a subscription no longer sends; nil: nothing
	// is called off.
	Deliveries Deliveries
}

// Service is the notification side's rules over the store.
type Service struct {
	st       *store.Store
	access   *Access
	cfg      Config
	kinds    *channels.Registry
	settings map[channels.Kind]channels.Settings
	box      *secret.Box
	// publicURL and linkKey build and check the links of messages.
	publicURL string
	linkKey   []byte
	now       func() time.Time
	clock     clock.Clock
	log       *slog.Logger
	tester    Tester
	wake      chan struct{} // wakes the health roll-up
	sendNow   *limiter      // send now, per subscription
	tests     *limiter      // test messages, per owner
	confirms  *limiter      // confirmations sent again, per recipient
	verifying bool          // recipients confirm before their channels send
	trusted   []string      // mail domains that need no confirmation, in lower case
	bursts    BurstReports
	dates     Dates
	// The engine and the delivery relay, told of what changes.
	scheduler  Scheduler
	handedOver func()
	deliveries Deliveries
}

// New returns the service. cfg must have passed Validate.
func New(st *store.Store, cfg Config, opt Options) *Service {
	s := &Service{st: st, access: NewAccess(st, opt.Domain), cfg: cfg, kinds: opt.Kinds, settings: opt.Settings, box: opt.Box, now: clock.Or(opt.Clock).Now, clock: clock.Or(opt.Clock),
		publicURL: strings.TrimRight(opt.PublicURL, "/"), linkKey: opt.LinkKey,
		log: opt.Logger, tester: opt.Tester, wake: make(chan struct{}, 1),
		sendNow: newLimiter(cfg.SendNowEvery), tests: newLimiter(cfg.TestEvery),
		confirms: newLimiter(confirmEvery), verifying: opt.VerifyRecipients, bursts: opt.Bursts, dates: opt.Dates,
		scheduler: opt.Scheduler, handedOver: opt.HandedOver, deliveries: opt.Deliveries}
	for _, d := range opt.TrustedDomains {
		s.trusted = append(s.trusted, strings.ToLower(strings.Trim(strings.TrimSpace(d), ".")))
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// callOff ends the pending deliveries of subscription sub (of its channel
// ch only, when ch is not empty), logging what it could not: a sender that
// missed the word finds them failed when it claims them.
func (s *Service) callOff(ctx context.Context, sub, ch, reason string) {
	if s.deliveries == nil {
		return
	}
	if err := s.deliveries.CallOff(context.WithoutCancel(ctx), sub, ch, reason); err != nil {
		s.log.Warn("call off pending deliveries", "subscription", sub, "channel", ch, "err", err)
	}
}

func (s *Service) changed(id string) {
	if s.scheduler != nil {
		s.scheduler.SubscriptionChanged(id)
	}
}

func (s *Service) quota() store.Quota {
	return store.Quota{SubscriptionsPerUser: s.cfg.MaxPerUser, SubscriptionsPerProject: s.cfg.MaxPerProject,
		ChannelsPerUser: s.cfg.MaxChannelsPerUser}
}

func quotaReached(qe *store.QuotaError) *Error {
	return conflict("Quota reached: at most %s %s; delete one first or ask an administrator to raise the limit",
		strconv.Itoa(qe.Max), qe.What)
}

// Access is the access rules the API and the engine decide by.
func (s *Service) Access() *Access { return s.access }

// ProjectGone says why nothing may run in a project any more (it is deleted),
// or "" when it is there.
func (s *Service) ProjectGone(ctx context.Context, projectID string) (string, error) {
	p, err := s.st.ProjectByID(ctx, projectID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.State == store.ProjectDeleted) {
		return "the project is deleted", nil
	}
	return "", err
}

// CannotFire says why the owner of a subscription in a project may not have
// it fire: the project is deleted, or the owner is not an enabled member.
// It returns "" when they may.
func (s *Service) CannotFire(ctx context.Context, projectID, owner string) (string, error) {
	if gone, err := s.ProjectGone(ctx, projectID); gone != "" || err != nil {
		return gone, err
	}
	st, err := s.access.UserStanding(ctx, projectID, owner)
	if err != nil {
		return "", err
	}
	if r := Decide(st, Needs{Member: true}, nil); r != nil {
		return r.Reason("the owner"), nil
	}
	return "", nil
}

// CheckSubscriber refuses a subscription for a user who is not an enabled
// member: the one membership rule of subscriptions, which Decide applies.
// Creating and updating a subscription apply it first; the API applies it
// before it translates a body, so that a stranger's body is refused as a
// stranger's before its fields are read.
func (s *Service) CheckSubscriber(ctx context.Context, projectID, owner string) error {
	st, err := s.access.UserStanding(ctx, projectID, owner)
	if err != nil {
		return err
	}
	if Decide(st, Needs{Member: true}, nil) != nil {
		return forbidden("User %s is not an enabled member of project %s", owner, projectID)
	}
	return nil
}
