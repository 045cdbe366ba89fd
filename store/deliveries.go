package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

// Run states the delivery ledger rolls a run up to. A run handed over for
// delivery is RunQueued until every one of its deliveries is final.
const (
	RunQueued          = "queued"
	RunDelivered       = "delivered"        // every delivery sent
	RunPartiallyFailed = "partially_failed" // some sent, some failed
	RunFailed          = "failed"           // every delivery failed
)

// Delivery states.
const (
	DeliveryPending = "pending"
	DeliverySent    = "sent"
	DeliveryFailed  = "failed"
)

// ErrFinal is returned when an attempt is recorded for a delivery that is
// already sent or failed.
var ErrFinal = errors.New("delivery is final")

// Run is one fire of a subscription at its scheduled instant.
type Run struct {
	ID             string
	SubscriptionID string
	ScheduledAt    time.Time
	State          string
	Detail         json.RawMessage // a JSON object; nil is stored as {}
	Error          string
	Started        time.Time
	Finished       time.Time // zero while the run is not finished
	// Incarnation is the process that claimed the run (set while it runs).
	Incarnation string
}

// Delivery is one message of a run to one channel: a row of the ledger.
type Delivery struct {
	ID             string
	RunID          string
	SubscriptionID string
	ScheduledAt    time.Time
	ChannelID      string // "" for a recipient's e-mail, which needs no channel of the owner's
	Kind           string // the channel's kind
	// Recipient is the member a delivery to a recipient of the subscription
	// is for (a user id); "" for a channel's own delivery and a burst row's.
	Recipient string
	// Address is where a delivery to a recipient goes, and Config the
	// channel configuration it sends with, its channel's with that address
	// in place of the channel's own; both empty for a channel's own delivery.
	Address    string
	Config     json.RawMessage
	Payload    Payload
	State      string // DeliveryPending, DeliverySent or DeliveryFailed
	Attempts   int    // how many sends were tried
	LastError  string
	ProviderID string    // the provider's id of the accepted message
	SentAt     time.Time // zero until sent
	Created    time.Time
	Updated    time.Time
	// Marks, when set, are kept for the channel once the delivery is sent
	// (see ChannelMarks). Written at hand-over; not read back with it.
	Marks *Marks
}

// Payload is the rendered message of a delivery.
type Payload struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html,omitempty"`
	// HTMLFile, in place of HTML, is a file of the run store that holds the
	// HTML part: the deliveries of one slice of a subscription to many
	// recipients share it, written once.
	HTMLFile    string          `json:"htmlFile,omitempty"`
	Attachments []Attachment    `json:"attachments,omitempty"`
	Source      channels.Source `json:"source,omitzero"`
	Links       channels.Links  `json:"links,omitzero"`
}

// RawPayload is a delivery's Payload as the store holds it: compact JSON.
type RawPayload []byte

// Decode reads the payload.
func (p RawPayload) Decode() (Payload, error) {
	var out Payload
	if err := json.Unmarshal(p, &out); err != nil {
		return Payload{}, fmt.Errorf("payload: %w", err)
	}
	return out, nil
}

// Attachment is an exported file attached to a delivery.
type Attachment struct {
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Path        string `json:"path"`
	// ContentID marks an image the HTML body shows inline (see channels.Attachment).
	ContentID string `json:"contentId,omitempty"`
}

// OutboxItem is a delivery not yet published to the message bus.
type OutboxItem struct {
	DeliveryID string
	Kind       string
	Created    time.Time
	Owner      string // the owner of the delivery's subscription
}

// EnqueueRun hands a run over for delivery as the engine does: it claims
// the run (ClaimRuns, as running) and then finishes it (FinishRuns) with one
// delivery per element of deliveries (RunID, SubscriptionID and ScheduledAt
// are taken from run; state pending) and one outbox row each. It is for tools
// and tests that make runs without the engine. An empty run.State is
// finished as RunQueued; a run without deliveries should be given a final
// state by the caller. A second run for the same subscription and instant
// gives ErrConflict and writes nothing.
func (s *Store) EnqueueRun(ctx context.Context, run Run, deliveries []Delivery) error {
	claim := run
	claim.State, claim.Finished = RunRunning, time.Time{}
	claimed, err := s.ClaimRuns(ctx, []Run{claim})
	if err != nil {
		return err
	}
	if !claimed[0] {
		return ErrConflict
	}
	if run.State == "" {
		run.State = RunQueued
	}
	return s.FinishRuns(ctx, []Finish{{Run: run, Deliveries: deliveries}}, run.Started)
}

// handover is a delivery to insert and the run it belongs to.
type handover struct {
	run Run
	d   Delivery
}

// handovers pairs each of run's deliveries with run.
func handovers(run Run, ds []Delivery) []handover {
	hs := make([]handover, len(ds))
	for i, d := range ds {
		hs[i] = handover{run, d}
	}
	return hs
}

// insertDeliveries writes each delivery (pending), its payload and its outbox
// row, many rows to a statement: a finisher's batch hands over hundreds at a
// time. A delivery id already taken gives ErrConflict.
func insertDeliveries(ctx context.Context, tx *sql.Tx, hs []handover) error {
	const perStatement = maxLedgerParams / 11
	for chunk := range slices.Chunk(hs, perStatement) {
		dargs := make([]any, 0, 11*len(chunk))
		pargs := make([]any, 0, 2*len(chunk))
		oargs := make([]any, 0, 3*len(chunk))
		for _, h := range chunk {
			payload, err := encodePayload(h.d.Payload)
			if err != nil {
				return fmt.Errorf("delivery %s payload: %w", h.d.ID, err)
			}
			now := h.run.Started.Unix()
			var config any
			if len(h.d.Config) > 0 {
				config = string(h.d.Config)
			}
			dargs = append(dargs, h.d.ID, h.run.ID, h.run.SubscriptionID, h.run.ScheduledAt.Unix(), h.d.ChannelID, h.d.Kind,
				now, now, h.d.Recipient, h.d.Address, config)
			pargs = append(pargs, h.d.ID, payload)
			oargs = append(oargs, h.d.ID, h.d.Kind, now, h.run.SubscriptionID)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO deliveries(id, run_id, subscription_id, scheduled_at, channel_id, kind,
			created, updated, recipient, address, config) VALUES `+valueRows(len(chunk), 11), dargs...)
		if isUnique(err) {
			return fmt.Errorf("insert deliveries: %w", ErrConflict)
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO delivery_payloads(delivery_id, payload) VALUES `+valueRows(len(chunk), 2),
				pargs...)
		}
		if err != nil {
			return fmt.Errorf("insert deliveries: %w", err)
		}
		outboxRow := "(?, ?, ?, (SELECT owner FROM subscriptions WHERE id = ?))"
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox(delivery_id, kind, created, owner) VALUES `+outboxRow+
			strings.Repeat(", "+outboxRow, len(chunk)-1), oargs...); err != nil {
			return fmt.Errorf("insert outbox: %w", err)
		}
	}
	return insertMarks(ctx, tx, hs)
}

// valueRows returns n rows of cols placeholders for a VALUES clause.
func valueRows(n, cols int) string {
	row := "(" + placeholders(cols) + ")"
	return row + strings.Repeat(", "+row, n-1)
}

// encodePayload writes p as JSON without escaping <, > and &: a payload is
// mostly HTML, which that escaping made half as large again and three times
// as slow to write.
func encodePayload(p Payload) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Outbox returns up to limit deliveries waiting to be published, oldest first.
func (s *Store) Outbox(ctx context.Context, limit int) ([]OutboxItem, error) {
	out, err := queryAll(ctx, s.r, scanOutboxItem, `SELECT delivery_id, kind, created, owner FROM outbox
		ORDER BY rowid LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	return out, nil
}

// OutboxOf returns up to limit deliveries of owner waiting to be published,
// oldest first, but those of the kinds in skip.
func (s *Store) OutboxOf(ctx context.Context, owner string, skip []string, limit int) ([]OutboxItem, error) {
	args := []any{owner}
	notIn := ""
	if len(skip) > 0 {
		notIn = ` AND kind NOT IN (` + placeholders(len(skip)) + `)`
		for _, k := range skip {
			args = append(args, k)
		}
	}
	out, err := queryAll(ctx, s.r, scanOutboxItem, `SELECT delivery_id, kind, created, owner FROM outbox
		WHERE owner = ?`+notIn+` ORDER BY rowid LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("read outbox: %w", err)
	}
	return out, nil
}

// OutboxOwners returns up to limit owners with deliveries waiting to be
// published, in order, from the first after after. Each is one seek of the
// owner index, however many rows an owner has.
func (s *Store) OutboxOwners(ctx context.Context, after string, limit int) ([]string, error) {
	var out []string
	for len(out) < limit {
		var owner string
		err := s.r.QueryRowContext(ctx, `SELECT owner FROM outbox WHERE owner > ? ORDER BY owner LIMIT 1`, after).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read outbox owners: %w", err)
		}
		out = append(out, owner)
		after = owner
	}
	return out, nil
}

// scanOutboxItem scans a delivery id, kind, creation time and owner.
func scanOutboxItem(row scanner) (OutboxItem, error) {
	var it OutboxItem
	var created int64
	err := row.Scan(&it.DeliveryID, &it.Kind, &created, &it.Owner)
	it.Created = time.Unix(created, 0).UTC()
	return it, err
}

// maxLedgerParams bounds the host parameters of one statement.
const maxLedgerParams = 500

// DeleteOutbox removes the outbox rows of the given deliveries; ids without a
// row are ignored.
func (s *Store) DeleteOutbox(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(ids, maxLedgerParams) {
			in, args := inList(chunk)
			if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE delivery_id IN `+in, args...); err != nil {
				return fmt.Errorf("delete outbox: %w", err)
			}
		}
		return nil
	})
}

// deliveryColumns are the columns scanDelivery reads, from deliveries d
// joined with delivery_payloads p (deliveryTables).
const deliveryColumns = `d.id, d.run_id, d.subscription_id, d.scheduled_at, d.channel_id, d.kind, p.payload, d.state,
	d.attempts, d.last_error, d.provider_id, d.sent_at, d.created, d.updated, d.recipient, d.address, d.config`

// deliveryTables joins each delivery with its payload.
const deliveryTables = `deliveries d JOIN delivery_payloads p ON p.delivery_id = d.id`

func scanDelivery(row scanner) (Delivery, error) {
	var d Delivery
	var scheduled, created, updated int64
	var sent sql.NullInt64
	var payload string
	var config sql.NullString
	err := row.Scan(&d.ID, &d.RunID, &d.SubscriptionID, &scheduled, &d.ChannelID, &d.Kind, &payload, &d.State,
		&d.Attempts, &d.LastError, &d.ProviderID, &sent, &created, &updated, &d.Recipient, &d.Address, &config)
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, ErrNotFound
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("scan delivery: %w", err)
	}
	if err := json.Unmarshal([]byte(payload), &d.Payload); err != nil {
		return Delivery{}, fmt.Errorf("delivery %s payload: %w", d.ID, err)
	}
	if config.Valid {
		d.Config = json.RawMessage(config.String)
	}
	d.ScheduledAt = time.Unix(scheduled, 0).UTC()
	d.Created, d.Updated = time.Unix(created, 0).UTC(), time.Unix(updated, 0).UTC()
	if sent.Valid {
		d.SentAt = time.Unix(sent.Int64, 0).UTC()
	}
	return d, nil
}

// Delivery returns the delivery with the given id.
func (s *Store) Delivery(ctx context.Context, id string) (Delivery, error) {
	return scanDelivery(s.r.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM `+deliveryTables+` WHERE d.id = ?`, id))
}

// Outgoing is a delivery as a sender needs it: its state, its payload and
// its channel as the channel is now.
type Outgoing struct {
	ID             string
	SubscriptionID string
	Owner          string // the subscription's owner
	ChannelID      string
	Kind           string
	State          string
	Attempts       int
	LastError      string
	Payload        RawPayload // as stored: a sender may pass it on undecoded

	ChannelGone   bool   // the channel was deleted; the fields below are empty
	ChannelKind   string // may differ from Kind when the channel was changed
	ChannelConfig json.RawMessage
	ChannelSecret []byte // sealed
	// ChannelUnverified says that the channel's recipient must confirm
	// before it sends, and has not.
	ChannelUnverified bool
	// Readdressed says that the delivery goes to an address of its own (a
	// recipient's), whose configuration ChannelConfig is.
	Readdressed bool
}

// OutgoingDeliveries reads deliveries with their channels, as a sender
// needs them, in one query; ids without a delivery are left out of the map.
// A delivery to a recipient sends with its own configuration and its
// channel's secret; one without a channel (a recipient's e-mail) with its
// own kind and configuration alone.
func (s *Store) OutgoingDeliveries(ctx context.Context, ids ...string) (map[string]Outgoing, error) {
	out, err := queryByID(ctx, s.r, ids, func(in string) string {
		return `SELECT d.id, d.subscription_id, COALESCE(s.owner, ''), d.channel_id, d.kind, d.state, d.attempts,
			d.last_error, p.payload, CASE WHEN d.channel_id = '' THEN d.kind ELSE c.kind END, COALESCE(d.config, c.config),
			c.secret, d.config IS NULL AND c.recipient != '' AND NOT EXISTS (SELECT 1 FROM recipients r
				WHERE r.owner = c.owner AND r.kind = c.kind AND r.address = c.recipient AND r.verified IS NOT NULL),
			d.config IS NOT NULL
			FROM ` + deliveryTables + ` LEFT JOIN channels c ON c.id = d.channel_id
			LEFT JOIN subscriptions s ON s.id = d.subscription_id WHERE d.id IN ` + in
	}, func(row scanner) (string, Outgoing, error) {
		o, err := scanOutgoing(row)
		return o.ID, o, err
	})
	if err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	return out, nil
}

func scanOutgoing(row scanner) (Outgoing, error) {
	var o Outgoing
	var payload string
	var chKind, chConfig sql.NullString
	var unverified sql.NullBool
	if err := row.Scan(&o.ID, &o.SubscriptionID, &o.Owner, &o.ChannelID, &o.Kind, &o.State, &o.Attempts, &o.LastError,
		&payload, &chKind, &chConfig, &o.ChannelSecret, &unverified, &o.Readdressed); err != nil {
		return Outgoing{}, fmt.Errorf("scan delivery: %w", err)
	}
	o.Payload = RawPayload(payload)
	o.ChannelGone, o.ChannelKind, o.ChannelUnverified = !chKind.Valid, chKind.String, unverified.Bool
	if chConfig.Valid && !o.ChannelGone {
		o.ChannelConfig = json.RawMessage(chConfig.String)
	}
	return o, nil
}

// RunDeliveries lists the deliveries of a run in the order they were handed over.
func (s *Store) RunDeliveries(ctx context.Context, runID string) ([]Delivery, error) {
	out, err := queryAll(ctx, s.r, scanDelivery, `SELECT `+deliveryColumns+` FROM `+deliveryTables+` WHERE d.run_id = ? ORDER BY d.rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

// RunByID returns the run with the given id.
func (s *Store) RunByID(ctx context.Context, id string) (Run, error) {
	return scanRun(s.r.QueryRowContext(ctx, `SELECT id, subscription_id, scheduled_at, state, detail, error, started, finished
		FROM runs WHERE id = ?`, id))
}

func unixOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Unix()
}

// StalePending lists, oldest first, up to limit deliveries still pending that have not
// changed since before and have no outbox row: each should have a message in the stream,
// and the reconciler checks that it has. With before in the future, it lists every
// delivery published and not yet final.
func (s *Store) StalePending(ctx context.Context, before time.Time, limit int) ([]OutboxItem, error) {
	out, err := queryAll(ctx, s.r, scanOutboxItem, `SELECT d.id, d.kind, d.created, COALESCE(s.owner, '')
		FROM deliveries d LEFT JOIN subscriptions s ON s.id = d.subscription_id
		WHERE d.state = 'pending' AND d.updated < ? AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.delivery_id = d.id)
		ORDER BY d.updated LIMIT ?`, before.Unix(), limit)
	if err != nil {
		return nil, fmt.Errorf("stale deliveries: %w", err)
	}
	return out, nil
}

// PendingOf lists the pending deliveries of subscription sub, of its channel
// ch only when ch is not empty.
func (s *Store) PendingOf(ctx context.Context, sub, ch string) ([]string, error) {
	out, err := queryAll(ctx, s.r, func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT id FROM deliveries WHERE subscription_id = ? AND state = 'pending' AND (? = '' OR channel_id = ?)`, sub, ch, ch)
	if err != nil {
		return nil, fmt.Errorf("pending deliveries: %w", err)
	}
	return out, nil
}

// DeliveryQuery selects deliveries of a run: those to a member (a user id),
// or whose address contains Address (in any case), Limit of them from Offset.
type DeliveryQuery struct {
	Recipient string
	Address   string
	Offset    int
	Limit     int
}

// RunDeliveryPage returns the deliveries of a run that q selects, in the order
// they were handed over, and how many q selects in all.
func (s *Store) RunDeliveryPage(ctx context.Context, runID string, q DeliveryQuery) ([]Delivery, int, error) {
	where, args := "d.run_id = ?", []any{runID}
	switch {
	case q.Recipient != "":
		where += " AND d.recipient = ?"
		args = append(args, q.Recipient)
	case q.Address != "":
		where += ` AND lower(d.address) LIKE ? ESCAPE '\'`
		args = append(args, "%"+likeEscaper.Replace(strings.ToLower(q.Address))+"%")
	}
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM deliveries d WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list deliveries: %w", err)
	}
	out, err := queryAll(ctx, s.r, scanDelivery, `SELECT `+deliveryColumns+` FROM `+deliveryTables+` WHERE `+where+
		` ORDER BY d.rowid LIMIT ? OFFSET ?`, append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list deliveries: %w", err)
	}
	return out, total, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// RunDeliveryCounts counts the deliveries of a run by state.
func (s *Store) RunDeliveryCounts(ctx context.Context, runID string) (map[string]int, error) {
	out := map[string]int{DeliveryPending: 0, DeliverySent: 0, DeliveryFailed: 0}
	err := eachRow(ctx, s.r, func(r scanner) error {
		var state string
		var n int
		if err := r.Scan(&state, &n); err != nil {
			return err
		}
		out[state] = n
		return nil
	}, `SELECT state, COUNT(*) FROM deliveries WHERE run_id = ? GROUP BY state`, runID)
	if err != nil {
		return nil, fmt.Errorf("count deliveries: %w", err)
	}
	return out, nil
}
