package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Tester sends one message to a channel at once, as the worker would.
type Tester interface {
	Test(ctx context.Context, m channels.Message) (providerID string, err error)
}

// ErrNoTester is TestChannel's error when the service has no Tester.
var ErrNoTester = errors.New("channel tests are not available: no sender is connected")

// TestResult is what the provider answered a test message.
type TestResult struct {
	// ProviderID is the provider's id of the accepted message; "" when it refused.
	ProviderID string
	// Error is the provider's refusal (or why the message could not be sent);
	// "" when it accepted the message.
	Error string
	// Permanent says that the refusal will not pass on a retry
	// (channels.IsPermanent): the channel configuration is wrong.
	Permanent bool
}

// TestSubject is the subject of test messages.
const TestSubject = "Test message from Herald"

// TestChannel sends a test message to channel id of owner through its kind's
// sender and says what the provider answered. At most one test per owner per
// Config.TestEvery (default 10s), and each test spends one of the owner's
// Config.SendNowPerHour (TooSoon with RetryAfter otherwise); bounded by ctx
// and the sender's own timeout.
//
// A refusal of the provider is no error of TestChannel: it is in the result,
// which for every failure to reach the receiver says channels.UnreachableText
// and no more. TestChannel's errors are NotFound, Conflict (a recipient who
// has not confirmed), TooSoon, ErrNoTester and internal ones. by names who
// asked, in the message's text.
func (s *Service) TestChannel(ctx context.Context, owner, id, by string) (TestResult, error) {
	ch, err := s.Channel(ctx, owner, id)
	if err != nil {
		return TestResult{}, err
	}
	if s.tester == nil {
		return TestResult{}, ErrNoTester
	}
	if v, err := s.Verification(ctx, ch); err != nil {
		return TestResult{}, err
	} else if v == Unverified { // a test is a message like any other
		return TestResult{}, conflict("The recipient of channel configuration %s has not accepted its messages yet; "+
			"send the confirmation again instead", ch.ID)
	}
	now := s.now()
	budget := s.ownerBudget(ch.Owner)
	spent, err := s.spend(ctx, now, budget)
	if err != nil {
		return TestResult{}, err
	}
	if wait, ok := s.tests.take(ch.Owner, now); !ok {
		s.refund(ctx, spent)
		return TestResult{}, tooSoon(wait, "A channel configuration was tested moments ago; %s may be tested in %s s", ch.ID)
	}
	m, err := s.testMessage(ch, by, now)
	if err != nil {
		// As the worker fails a delivery it cannot open the secret of: the
		// channel cannot send until it is saved again with its secret.
		s.log.Warn("channel test not sent", "channel", ch.ID, "kind", ch.Kind, "by", by, "err", err)
		return TestResult{Error: err.Error(), Permanent: true}, nil
	}
	providerID, sendErr := s.tester.Test(ctx, m)
	if sendErr != nil {
		if ctx.Err() != nil && errors.Is(sendErr, ctx.Err()) {
			// The asker went away: nothing the provider said.
			return TestResult{}, fmt.Errorf("test channel %s: %w", ch.ID, sendErr)
		}
		r := TestResult{Error: sendErr.Error(), Permanent: channels.IsPermanent(sendErr)}
		if unreachable(sendErr) {
			r.Error = channels.UnreachableText
		}
		s.log.Info("channel test refused", "channel", ch.ID, "kind", ch.Kind, "by", by, "delivery", m.DeliveryID,
			"permanent", r.Permanent, "err", sendErr)
		return r, nil
	}
	s.log.Info("channel test sent", "channel", ch.ID, "kind", ch.Kind, "by", by, "delivery", m.DeliveryID,
		"provider_id", providerID)
	return TestResult{ProviderID: providerID}, nil
}

// testMessage is the test message to ch, with its secret opened as the
// worker opens it. Its error never holds the secret.
func (s *Service) testMessage(ch store.Channel, by string, now time.Time) (channels.Message, error) {
	secret, err := s.box.OpenFor(ch.Secret, ch.ID)
	if err != nil {
		return channels.Message{}, fmt.Errorf("channel %s: %w", ch.ID, err)
	}
	text := fmt.Sprintf("This is a test message that %s asked for at %s to check the channel configuration “%s”. "+
		"Nothing needs doing.", by, now.UTC().Format("2006-01-02 15:04:05 UTC"), ch.Title)
	return channels.Message{
		// Unique per test, so that e-mail gets a fresh Message-ID.
		DeliveryID: "test-" + store.NewID(20),
		Channel:    channels.Channel{ID: ch.ID, Kind: channels.Kind(ch.Kind), Config: ch.Config, Secret: secret},
		Subject:    TestSubject,
		Text:       text,
	}, nil
}

// unreachable reports whether a send failed before the receiver answered:
// a sender said so (channels.Unreachable), or the connection was not made.
func unreachable(err error) bool {
	var op *net.OpError
	return channels.IsUnreachable(err) || errors.As(err, &op)
}
