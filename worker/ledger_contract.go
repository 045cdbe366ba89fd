package worker

import (
	"context"
	"errors"
	"time"
)

// Ledger is the record of what became of each delivery. A consumer reads it
// before it sends, so that a delivery recorded as sent or failed never goes
// out again, and writes each outcome to it before it acknowledges the message.
// Two implementations exist: the control process's SQLite (NewSQLiteLedger),
// for one process, and a replicated JetStream key-value bucket (NewKVLedger),
// for senders on any machine.
type Ledger interface {
	// Claim returns the entries of the deliveries ids and claims the pending
	// ones for a send by this process, unless another process holds a claim
	// it keeps renewing (Entry.Busy). An id the ledger does not know (its run
	// was deleted) is left out of the map.
	Claim(ctx context.Context, ids []string) (map[string]Entry, error)
	// Sent records the accepted send of a delivery with the provider's id. It
	// reports false, changing nothing, when the delivery was final already
	// (settled elsewhere while it was sent here).
	Sent(ctx context.Context, id, providerID string) (bool, error)
	// Attempt records a failed send of a pending delivery, which stays
	// pending, and returns how many attempts it has had. A final delivery
	// gives ErrFinal, an unknown one ErrUnknown.
	Attempt(ctx context.Context, id, errText string) (int, error)
	// Failed gives up on a pending delivery with reason as its last error. It
	// reports false, changing nothing, when the delivery was final already.
	Failed(ctx context.Context, id, reason string) (bool, error)
}

// Entry is a delivery's line in the ledger.
type Entry struct {
	State     string // store.DeliveryPending, store.DeliverySent or store.DeliveryFailed
	Attempts  int    // failed or accepted sends so far
	LastError string
	// Busy is set on a pending delivery that another process claimed and
	// keeps claiming: it is sending it, so this one must not.
	Busy bool
}

// Ledger errors.
var (
	// ErrFinal: the delivery is sent or failed already.
	ErrFinal = errors.New("delivery is final")
	// ErrUnknown: the ledger has no such delivery.
	ErrUnknown = errors.New("delivery unknown to the ledger")
)

// Outcome is what a sender reports of one delivery on the results stream, so
// that the control process records it in its run history whatever process sent.
type Outcome struct {
	Delivery   string    `json:"delivery"`
	State      string    `json:"state"` // pending after a failed attempt, sent or failed
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"lastError,omitempty"`
	ProviderID string    `json:"providerId,omitempty"`
	At         time.Time `json:"at"`
}

// resultsSubjectPrefix starts the subject of every outcome: herald.results.<delivery id>.
const resultsSubjectPrefix = "herald.results."
