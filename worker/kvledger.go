package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

// Defaults of KVLedgerConfig.
const (
	DefaultLedgerBucket  = "HERALD_LEDGER"
	DefaultResultsStream = "HERALD_RESULTS"
	DefaultLedgerTTL     = 2 * DefaultMaxAge // Config.Keep of the default configuration
)

const (
	// kvClaimParallel bounds the key-value round trips one Claim has in flight.
	kvClaimParallel = 16
	// kvCASTries bounds the compare-and-set writes of one entry in one call.
	// Each conflict means another process wrote the entry meanwhile, and only
	// a holder presumed dead and its successor write the same entry, so a few
	// tries are plenty; past them the call fails and the message comes back.
	kvCASTries = 8
	// resultsDedupe is the results stream's duplicate window: a result
	// published again within it is dropped by the stream.
	resultsDedupe = 10 * time.Minute
	// claimMemory is how long a claim's revision is remembered when its
	// delivery is not settled here (its message was handed back, or another
	// process took it over). A forgotten revision costs one read, no more.
	claimMemory = time.Hour
	// kvTryFor bounds one request to the bucket or the results stream. A
	// request lost with a stopped server is not answered at all; bounding
	// each try lets the next one reach the leader elected meanwhile instead
	// of waiting out the caller's whole deadline.
	kvTryFor = 2 * time.Second
)

// KVLedgerConfig configures the ledger kept in JetStream.
type KVLedgerConfig struct {
	// Bucket is the key-value bucket of the entries. Default DefaultLedgerBucket.
	Bucket string
	// Results is the stream of the outcomes, on subjects resultsSubjectPrefix
	// + ">". Default DefaultResultsStream.
	Results string
	// Replicas of the bucket and the stream. Default 1.
	Replicas int
	// TTL is how long an entry and a result are kept after their last write.
	// Default DefaultLedgerTTL, Config.Keep of the default configuration:
	// past it no message can reference the entry any more.
	TTL time.Duration
	// Owner names this process in its claims, e.g. a random incarnation id.
	// Required.
	Owner string
	// Lease is how long a claim keeps other processes from claiming the
	// delivery: its owner renews it while it sends (Renew), so a claim older
	// than Lease is one of a process presumed dead. Default DefaultAckWait,
	// the consumers' ack wait, after which JetStream presumes the same.
	Lease time.Duration
	// Clock stamps the entries and outcomes and paces the retries. Default:
	// the real clock.
	Clock clock.Clock
	// Logger is told of the results that could not be published. Default: none.
	Logger *slog.Logger
	// PublishFor is how long the publish of one result is tried (through a
	// leader election of the results stream, say) before it is left to the
	// next claim of its delivery. Default DefaultResultsPublishFor.
	PublishFor time.Duration
}

// DefaultResultsPublishFor is how long a result's publish is tried by
// default: longer than a leader election of a replicated stream takes.
const DefaultResultsPublishFor = 10 * time.Second

// KVLedger is the Ledger in a replicated JetStream key-value bucket, for
// senders on machines without the control process's store. An entry's key is
// the delivery id and its value the JSON of kvEntry; every write is a
// compare-and-set on the revision last read, so that of two processes that
// race to settle a delivery exactly one succeeds and the other learns that it
// was settled elsewhere.
//
// The key-value write is the truth. After each write of an outcome the ledger
// publishes it (an Outcome) on the results stream, whence the control process
// records it in its run history. A publish that fails is not an error of the
// write: the result goes out again when the delivery is next claimed and
// found final (the control process's reconciler hands a delivery whose
// outcome it never heard of out again for that), and the stream drops a copy
// that comes within its duplicate window. Only final results are published
// again: a lost result of a failed attempt is made good by the final one.
type KVLedger struct {
	kv      jetstream.KeyValue
	js      jetstream.JetStream
	results string
	// msgGet and keys are where the entries are read (see get).
	msgGet, keys string
	owner        string
	lease        time.Duration
	clock        clock.Clock
	log          *slog.Logger
	// publishFor bounds the tries of one result's publish.
	publishFor time.Duration
	// failedTry, a test hook, is told of each try of a publish that failed.
	failedTry func(error)

	// claims remembers the entry as this process last wrote it, with its
	// revision, so that the write that follows a claim needs no read. It is
	// a hint: a stale revision fails the compare-and-set, and the entry is
	// read again.
	mu        sync.Mutex
	claims    map[string]kvClaim
	lastSweep time.Time
}

// kvEntry is the value of a delivery's key.
type kvEntry struct {
	State      string    `json:"state"` // store.DeliveryPending, store.DeliverySent or store.DeliveryFailed
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"lastError,omitempty"`
	ProviderID string    `json:"providerId,omitempty"`
	Owner      string    `json:"owner"`   // the process holding the latest claim
	Claimed    time.Time `json:"claimed"` // when it claimed
	Updated    time.Time `json:"updated"` // the last write
}

// kvClaim is an entry at a revision this process read or wrote.
type kvClaim struct {
	rev uint64
	e   kvEntry
	at  time.Time // when remembered
}

func (e kvEntry) final() bool { return e.State != store.DeliveryPending }

func (e kvEntry) entry(busy bool) Entry {
	return Entry{State: e.State, Attempts: e.Attempts, LastError: e.LastError, Busy: busy}
}

// claimedElsewhere reports whether another process holds a live claim of e at now.
func (l *KVLedger) claimedElsewhere(e kvEntry, now time.Time) bool {
	return e.Owner != "" && e.Owner != l.owner && now.Sub(e.Claimed) < l.lease
}

// NewKVLedger creates or updates the bucket and the results stream and
// returns the ledger.
func NewKVLedger(ctx context.Context, js jetstream.JetStream, cfg KVLedgerConfig) (*KVLedger, error) {
	if cfg.Owner == "" {
		return nil, errors.New("kv ledger: no owner")
	}
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultLedgerBucket
	}
	if cfg.Results == "" {
		cfg.Results = DefaultResultsStream
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultLedgerTTL
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultAckWait
	}
	if cfg.PublishFor <= 0 {
		cfg.PublishFor = DefaultResultsPublishFor
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var kv jetstream.KeyValue
	err := untilAvailable(ctx, cfg.Logger, "ledger bucket", func(ctx context.Context) (err error) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   cfg.Bucket,
			History:  1,
			TTL:      cfg.TTL,
			Storage:  jetstream.FileStorage,
			Replicas: cfg.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kv ledger bucket %s: %w", cfg.Bucket, err)
	}
	if err := createResultsStream(ctx, cfg.Logger, js, cfg.Results, cfg.Replicas, cfg.TTL); err != nil {
		return nil, err
	}
	msgGet, keys := msgGetSubject(js, "KV_"+cfg.Bucket), "$KV."+cfg.Bucket+"."
	return &KVLedger{kv: kv, js: js, results: cfg.Results, msgGet: msgGet, keys: keys, owner: cfg.Owner, lease: cfg.Lease,
		clock: clock.Or(cfg.Clock), log: cfg.Logger, publishFor: cfg.PublishFor, claims: make(map[string]kvClaim)}, nil
}

// ResultsConsumer returns the durable pull consumer of the results stream
// through which the control process reads every Outcome (the JSON of one in
// each message's body), from the first kept, acknowledging each once it is
// recorded. An outcome can come more than once (a result published again
// after the stream's duplicate window), and a later attempt can come before
// an earlier one: what reads them keeps the one of most attempts, and a final
// state over a pending one.
//
// An outcome handed out and not acknowledged within ackWait comes again:
// one lost with the connection it travelled on (its NATS server gone) waits
// that long, and a run stays unsettled meanwhile. ackWait is Config.AckWait,
// which bounds the same wait for a delivery.
func ResultsConsumer(ctx context.Context, js jetstream.JetStream, stream, durable string, ackWait time.Duration) (jetstream.Consumer, error) {
	c, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{
		Durable:       durable,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("results consumer %s on %s: %w", durable, stream, err)
	}
	return c, nil
}

// Claim returns the entries of ids, creating a pending entry for an id it
// has never seen (the key-value bucket has no other source of truth, so every
// id is in the map), and claims each pending one for this process: it writes
// itself as the owner, with a compare-and-set on the revision it read. It
// publishes again the result of every final entry it returns.
//
// JetStream hands a message to one consumer at a time, so two processes claim
// the same delivery only when the first holder is presumed dead (its ack wait
// passed), or when a copy went out while the first holder's word that it was
// in progress was lost (a leader election of the stream, say). A claim that
// its owner renewed within the lease is left to it: the entry comes back Busy,
// and this process holds its copy until the claim is settled or lapses. When
// the other process keeps winning the race, the entry is returned all the
// same: it is pending, and the compare-and-set of the outcome's write lets
// only one of the two settle it.
//
// An id that is not a valid key fails the whole call, before anything is
// written.
func (l *KVLedger) Claim(ctx context.Context, ids []string) (map[string]Entry, error) {
	uniq := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !validKey(id) {
			return nil, invalidKey(id)
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	l.sweep()
	entries := make([]Entry, len(uniq))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(kvClaimParallel)
	for i, id := range uniq {
		g.Go(func() error {
			e, busy, err := l.claim(gctx, id)
			if err != nil {
				return fmt.Errorf("claim delivery %s: %w", id, err)
			}
			entries[i] = e.entry(busy)
			if e.final() {
				l.publish(gctx, id, e)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string]Entry, len(uniq))
	for i, id := range uniq {
		out[id] = entries[i]
	}
	return out, nil
}

// Renew extends this process's claims of the pending deliveries ids, which it
// is sending, so that no other process takes them over meanwhile. A claim
// that another process took over, or a delivery settled, is left as it is.
func (l *KVLedger) Renew(ctx context.Context, ids []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(kvClaimParallel)
	for _, id := range ids {
		g.Go(func() error {
			_, _, err := l.update(gctx, id, func(e *kvEntry) (bool, error) {
				if e.final() || e.Owner != l.owner {
					return false, nil
				}
				e.Claimed = l.clock.Now()
				return true, nil
			})
			if errors.Is(err, ErrUnknown) {
				return nil
			}
			return err
		})
	}
	return g.Wait()
}

// claim creates or claims the entry of one delivery and returns it; busy when
// another process holds a live claim of it.
func (l *KVLedger) claim(ctx context.Context, id string) (_ kvEntry, busy bool, _ error) {
	var last kvEntry
	for range kvCASTries {
		now := l.clock.Now()
		stored, err := l.get(ctx, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			e := kvEntry{State: store.DeliveryPending, Owner: l.owner, Claimed: now, Updated: now}
			var rev uint64
			err := l.retry(ctx, func(ctx context.Context) (err error) {
				rev, err = l.kv.Create(ctx, id, marshalEntry(e))
				return err
			})
			switch {
			case err == nil:
				l.remember(id, rev, e)
				return e, false, nil
			case errors.Is(err, jetstream.ErrKeyExists):
				continue // another process created it first: read its entry
			default:
				return kvEntry{}, false, err
			}
		}
		if err != nil {
			return kvEntry{}, false, err
		}
		e, err := unmarshalEntry(stored.value)
		if err != nil {
			return kvEntry{}, false, err
		}
		if e.final() {
			l.forget(id)
			return e, false, nil
		}
		if l.claimedElsewhere(e, now) {
			l.forget(id)
			return e, true, nil
		}
		last = e
		e.Owner, e.Claimed, e.Updated = l.owner, now, now
		rev, err := l.put(ctx, id, e, stored.rev)
		switch {
		case err == nil:
			l.remember(id, rev, e)
			return e, false, nil
		case !errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			return kvEntry{}, false, err
		}
		// Another process wrote it since the read: read it again.
	}
	l.forget(id)
	if last.State == "" {
		return kvEntry{}, false, fmt.Errorf("created and removed elsewhere %d times in a row", kvCASTries)
	}
	// Another process keeps claiming it; it is still pending as last read.
	return last, false, nil
}

// Sent records the accepted send of a pending delivery. A delivery the
// ledger does not have gives ErrUnknown.
func (l *KVLedger) Sent(ctx context.Context, id, providerID string) (bool, error) {
	ours := false
	e, changed, err := l.update(ctx, id, func(e *kvEntry) (bool, error) {
		if e.final() {
			// The same send recorded already: as a rule this call's own
			// write, whose answer was lost, found when the entry was read
			// again; its result may not have gone out.
			ours = e.State == store.DeliverySent && e.ProviderID == providerID && providerID != ""
			return false, nil
		}
		e.State = store.DeliverySent
		e.Attempts++
		e.ProviderID = providerID
		return true, nil
	})
	if err != nil || !(changed || ours) {
		return false, err
	}
	l.publish(ctx, id, e)
	return true, nil
}

// Attempt records a failed send of a pending delivery.
func (l *KVLedger) Attempt(ctx context.Context, id, errText string) (int, error) {
	e, _, err := l.update(ctx, id, func(e *kvEntry) (bool, error) {
		if e.final() {
			return false, ErrFinal
		}
		e.Attempts++
		e.LastError = errText
		return true, nil
	})
	if err != nil {
		return e.Attempts, err
	}
	l.publish(ctx, id, e)
	return e.Attempts, nil
}

// Failed gives up on a pending delivery.
func (l *KVLedger) Failed(ctx context.Context, id, reason string) (bool, error) {
	e, changed, err := l.update(ctx, id, func(e *kvEntry) (bool, error) {
		if e.final() {
			return false, nil
		}
		e.State = store.DeliveryFailed
		e.LastError = reason
		return true, nil
	})
	if err != nil || !changed {
		return false, err
	}
	l.publish(ctx, id, e)
	return true, nil
}

// update applies change to the entry of id and writes it with a
// compare-and-set on its revision: the one remembered from this process's
// last write when there is one, else the one read. On a conflict it reads the
// entry again and applies change to that. change reports whether to write; it
// sees the entry as stored, final or not. update returns the entry as written,
// or as found when change wrote nothing, and whether it wrote.
func (l *KVLedger) update(ctx context.Context, id string, change func(*kvEntry) (bool, error)) (kvEntry, bool, error) {
	if !validKey(id) {
		return kvEntry{}, false, invalidKey(id)
	}
	c, ok := l.remembered(id)
	for range kvCASTries {
		if !ok {
			stored, err := l.get(ctx, id)
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				l.forget(id)
				return kvEntry{}, false, ErrUnknown
			}
			if err != nil {
				return kvEntry{}, false, err
			}
			if c.e, err = unmarshalEntry(stored.value); err != nil {
				return kvEntry{}, false, err
			}
			c.rev = stored.rev
		}
		e := c.e
		write, err := change(&e)
		if !write {
			if c.e.final() {
				l.forget(id)
			}
			return c.e, false, err
		}
		e.Updated = l.clock.Now()
		rev, err := l.put(ctx, id, e, c.rev)
		switch {
		case err == nil:
			if e.final() {
				l.forget(id)
			} else {
				l.remember(id, rev, e)
			}
			return e, true, nil
		case !errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			return kvEntry{}, false, err
		}
		ok = false // written elsewhere since: read it again
	}
	return kvEntry{}, false, fmt.Errorf("delivery %s: written elsewhere %d times in a row", id, kvCASTries)
}

// publish puts the outcome of e on the results stream. Its message id names
// the delivery, state and attempts, so that the stream drops a result
// published again. It is tried for up to publishFor, with a growing pause
// between tries, so that a leader election of the stream does not lose it; a
// result still not published is logged: the entry is written, and the result
// goes out again when the delivery is next claimed (the control process's
// reconciler publishes a delivery again whose outcome it never heard of).
func (l *KVLedger) publish(ctx context.Context, id string, e kvEntry) {
	o := Outcome{Delivery: id, State: e.State, Attempts: e.Attempts, LastError: e.LastError,
		ProviderID: e.ProviderID, At: e.Updated}
	data, err := json.Marshal(o)
	if err != nil {
		panic(err) // an Outcome always marshals
	}
	msg := &nats.Msg{Subject: resultsSubjectPrefix + id, Header: nats.Header{}, Data: data}
	msg.Header.Set(jetstream.MsgIDHeader, id+"."+e.State+"."+strconv.Itoa(e.Attempts))
	ctx, cancel := context.WithTimeout(ctx, l.publishFor)
	defer cancel()
	err = l.retry(ctx, func(ctx context.Context) error {
		_, err := l.js.PublishMsg(ctx, msg, jetstream.WithExpectStream(l.results))
		return err
	})
	if err != nil {
		l.log.Warn("publish delivery result", "delivery", id, "state", e.State, "attempts", e.Attempts, "err", err)
	}
}

// storedEntry is a ledger entry's value as stored, with its revision.
type storedEntry struct {
	value []byte
	rev   uint64
}

// get reads the entry of id from the bucket's leader (see readLast), trying
// again as retry does; an id without an entry gives jetstream.ErrKeyNotFound.
// A replica's answer will not do here: an entry it has not applied yet would
// say the ledger has no such delivery (ErrUnknown), and a sent mail would go
// unrecorded, to be sent again. An older entry would be harmless: the
// compare-and-set refuses its revision.
func (l *KVLedger) get(ctx context.Context, id string) (e storedEntry, err error) {
	err = l.retry(ctx, func(ctx context.Context) error {
		m, err := readLast(ctx, l.js.Conn(), l.msgGet, l.keys+id)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return jetstream.ErrKeyNotFound
		case err != nil:
			return err
		case m.header.Get("KV-Operation") != "":
			// A delete or purge marker: the ledger writes none, but a
			// bucket edited by hand may hold one.
			return jetstream.ErrKeyNotFound
		}
		e = storedEntry{value: m.data, rev: m.seq}
		return nil
	})
	return e, err
}

// put writes e as the entry of id if the entry is still at revision rev,
// trying again as retry does. A write that went in but whose answer was lost
// is tried again at the revision it replaced and fails with
// jetstream.ErrKeyRevisionMismatch; the caller reads the entry again and
// finds its own write.
func (l *KVLedger) put(ctx context.Context, id string, e kvEntry, rev uint64) (uint64, error) {
	var next uint64
	err := l.retry(ctx, func(ctx context.Context) (err error) {
		next, err = l.kv.Update(ctx, id, marshalEntry(e), rev)
		return err
	})
	return next, err
}

// retry calls op, each time with kvTryFor at most, until it succeeds, fails
// for a reason other than an unanswered or refused request (a stopped
// server, a leader election, a stream being created), or ctx ends. The
// pause between tries grows from 50 ms to 1 s.
func (l *KVLedger) retry(ctx context.Context, op func(context.Context) error) error {
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		tctx, cancel := context.WithTimeout(ctx, kvTryFor)
		err := op(tctx)
		cancel()
		if err == nil || !unanswered(err) {
			return err
		}
		if l.failedTry != nil {
			l.failedTry(err)
		}
		if !clock.Sleep(ctx, l.clock, pause) {
			return err
		}
	}
}

// unanswered reports whether err says a request went unanswered or was
// turned away for now, so that asking again, perhaps of another server, may
// succeed.
func unanswered(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout),
		errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrDisconnected):
		return true
	case errors.As(err, &apiErr):
		return apiErr.Code == 503 // e.g. JetStream system temporarily unavailable
	}
	return false
}

func (l *KVLedger) remember(id string, rev uint64, e kvEntry) {
	l.mu.Lock()
	l.claims[id] = kvClaim{rev: rev, e: e, at: l.clock.Now()}
	l.mu.Unlock()
}

func (l *KVLedger) remembered(id string) (kvClaim, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.claims[id]
	return c, ok
}

func (l *KVLedger) forget(id string) {
	l.mu.Lock()
	delete(l.claims, id)
	l.mu.Unlock()
}

// sweep forgets, at most once per claimMemory, the claims older than that.
func (l *KVLedger) sweep() {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) < claimMemory {
		return
	}
	l.lastSweep = now
	for id, c := range l.claims {
		if now.Sub(c.at) >= claimMemory {
			delete(l.claims, id)
		}
	}
}

func marshalEntry(e kvEntry) []byte {
	data, err := json.Marshal(e)
	if err != nil {
		panic(err) // a kvEntry always marshals
	}
	return data
}

func unmarshalEntry(data []byte) (kvEntry, error) {
	var e kvEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return kvEntry{}, fmt.Errorf("ledger entry: %w", err)
	}
	switch e.State {
	case store.DeliveryPending, store.DeliverySent, store.DeliveryFailed:
		return e, nil
	}
	return kvEntry{}, fmt.Errorf("ledger entry: unknown state %q", e.State)
}

// validKey reports whether id is a key of the bucket (the rule of
// jetstream's keys; delivery ids are hex and always are).
func validKey(id string) bool {
	if id == "" || id[0] == '.' || id[len(id)-1] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '/', c == '_', c == '=':
		case c == '.' && id[i-1] != '.':
		default:
			return false
		}
	}
	return true
}

func invalidKey(id string) error {
	return fmt.Errorf("delivery id %q: %w", id, jetstream.ErrInvalidKey)
}
